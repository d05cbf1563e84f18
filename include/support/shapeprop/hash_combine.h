// hash_combine: mixes the hash of one more part into the hash of a compound key, with
// boost::hash_combine's formula (the 64-bit golden-ratio constant). Every hash of a
// compound key in shapeprop (facts, dims, function ids, call signatures, op outcomes,
// expressions, the analysis's caches) mixes its parts with it, in unsigned arithmetic: a
// part from the model (an element type, a dim) is cast to an unsigned type first, so that
// no value the model holds can overflow a signed sum.
#pragma once

#include <cstddef>

namespace shapeprop {

constexpr void hash_combine(std::size_t& seed, std::size_t value) {
  seed ^= value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
}

}  // namespace shapeprop
