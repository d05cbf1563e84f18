// NameMap: value names to numbers, for the walks that resolve every name of a model.
//
// Open addressing with linear probing over a power-of-two table of (hash, view, value)
// slots: a lookup is one hash of the name and a short probe, an insertion allocates
// nothing but the occasional table growth. Keys are views: the strings they view (the
// model's own names) must outlive the map and stay unchanged. std::unordered_map spends
// an allocation per entry and a slower hash, which made name resolution the costliest
// part of indexing a large body.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace shapeprop {

class NameMap {
 public:
  static constexpr uint32_t kMissing = UINT32_MAX;

  explicit NameMap(size_t expected = 0) { reserve(expected); }

  void reserve(size_t expected) {
    size_t capacity = 16;
    while (capacity < expected * 2) capacity *= 2;
    if (capacity > slots_.size()) rehash(capacity);
  }

  // The value of `key`, or kMissing.
  uint32_t find(std::string_view key) const {
    if (size_ == 0) return kMissing;
    const uint64_t h = hash(key);
    for (size_t i = h & mask(); ; i = (i + 1) & mask()) {
      const Slot& s = slots_[i];
      if (!s.data) return kMissing;
      if (s.hash == h && same(s, key)) return s.value;
    }
  }
  bool contains(std::string_view key) const { return find(key) != kMissing; }

  // Sets `key` to `value`; true when the key was new.
  bool insert_or_assign(std::string_view key, uint32_t value) { return put(key, value, /*assign=*/true); }
  // Adds `key` with `value` unless present; true when the key was new.
  bool insert(std::string_view key, uint32_t value = 0) { return put(key, value, /*assign=*/false); }

  size_t size() const { return size_; }

  static uint64_t hash(std::string_view key) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ key.size();
    const char* p = key.data();
    size_t n = key.size();
    for (; n >= 8; p += 8, n -= 8) {
      uint64_t w;
      std::memcpy(&w, p, 8);
      h = (h ^ w) * 0xff51afd7ed558ccdull;
      h ^= h >> 32;
    }
    uint64_t w = 0;
    if (n != 0) std::memcpy(&w, p, n);  // an empty view's data() may be null
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 29;
    return h | 1;  // never 0: 0 marks nothing
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    const char* data = nullptr;  // nullptr: empty slot
    uint32_t size = 0;
    uint32_t value = 0;
  };
  std::vector<Slot> slots_;
  size_t size_ = 0;

  size_t mask() const { return slots_.size() - 1; }
  static bool same(const Slot& s, std::string_view key) {
    return s.size == key.size() && (key.empty() || std::memcmp(s.data, key.data(), key.size()) == 0);
  }

  bool put(std::string_view key, uint32_t value, bool assign) {
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.empty() ? 16 : slots_.size() * 2);
    const uint64_t h = hash(key);
    // A view of an empty string still needs a non-null pointer to mark its slot used.
    const char* data = key.data() ? key.data() : "";
    for (size_t i = h & mask(); ; i = (i + 1) & mask()) {
      Slot& s = slots_[i];
      if (!s.data) {
        s = Slot{h, data, static_cast<uint32_t>(key.size()), value};
        ++size_;
        return true;
      }
      if (s.hash == h && same(s, key)) {
        if (assign) s.value = value;
        return false;
      }
    }
  }

  void rehash(size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    for (const Slot& s : old) {
      if (!s.data) continue;
      for (size_t i = s.hash & mask(); ; i = (i + 1) & mask())
        if (!slots_[i].data) {
          slots_[i] = s;
          break;
        }
    }
  }
};

}  // namespace shapeprop
