#include "support/proto_hash.h"

#include <cstring>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream.h>

namespace shapeprop {

namespace {

// Hands protobuf a fixed buffer and folds each filled buffer into the hash (64-bit words
// mixed with a multiply and a rotation, then the length).
class HashingStream final : public google::protobuf::io::ZeroCopyOutputStream {
 public:
  bool Next(void** data, int* size) override {
    flush();
    *data = buffer_;
    *size = kSize;
    pending_ = kSize;
    return true;
  }
  void BackUp(int count) override { pending_ -= count; }
  int64_t ByteCount() const override { return total_ + pending_; }

  uint64_t finish() {
    flush();
    return mix(state_ ^ static_cast<uint64_t>(total_));
  }

 private:
  static constexpr int kSize = 8192;
  unsigned char buffer_[kSize];
  int pending_ = 0;
  int64_t total_ = 0;
  uint64_t state_ = 0x9e3779b97f4a7c15ull;

  static uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
  }
  void flush() {
    int i = 0;
    for (; i + 8 <= pending_; i += 8) {
      uint64_t word;
      std::memcpy(&word, buffer_ + i, 8);
      state_ = mix(state_ ^ word) * 0x9e3779b97f4a7c15ull;
    }
    if (i < pending_) {
      uint64_t word = 0;
      std::memcpy(&word, buffer_ + i, static_cast<size_t>(pending_ - i));
      state_ = mix(state_ ^ word ^ (static_cast<uint64_t>(pending_ - i) << 56)) * 0x9e3779b97f4a7c15ull;
    }
    total_ += pending_;
    pending_ = 0;
  }
};

}  // namespace

uint64_t hash_message(const google::protobuf::MessageLite& message) {
  HashingStream stream;
  {
    google::protobuf::io::CodedOutputStream out(&stream);
    out.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&out);
  }
  return stream.finish();
}

}  // namespace shapeprop
