// ByteReader: the fuzzer's bytes as a stream of choices (a small stand-in for LLVM's
// FuzzedDataProvider, which only clang's resource folder has: the replay drivers build
// with g++ too). Once the bytes run out every choice is the smallest one, so that every
// input gives a finite, deterministic result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <initializer_list>
#include <string>

namespace shapeprop::fuzz {

class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }

  // A number in [lo, hi], from as few bytes as the range needs.
  int64_t number(int64_t lo, int64_t hi) {
    if (hi <= lo) return lo;
    const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    uint64_t value = 0;
    for (uint64_t covered = 0; covered < range && !empty(); covered = (covered << 8) | 0xff)
      value = (value << 8) | data_[pos_++];
    return static_cast<int64_t>(static_cast<uint64_t>(lo) + (range == UINT64_MAX ? value : value % (range + 1)));
  }
  size_t index(size_t count) { return count == 0 ? 0 : static_cast<size_t>(number(0, static_cast<int64_t>(count) - 1)); }
  bool flag() { return number(0, 1) == 1; }
  template <class T>
  T pick(std::initializer_list<T> choices) {
    return *(choices.begin() + index(choices.size()));
  }
  // Up to `max` bytes, as they come.
  std::string bytes(size_t max) {
    const size_t n = std::min(max, size_ - std::min(pos_, size_));
    std::string out(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return out;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace shapeprop::fuzz
