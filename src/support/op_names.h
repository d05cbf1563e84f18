// Fixed lists of op names, asked whether they hold an op: a scan over a few string_views,
// with no hashing and no allocation (the lists are short, and so are op names).
#pragma once

#include <algorithm>
#include <initializer_list>
#include <string_view>

namespace shapeprop {

inline bool one_of(std::string_view op, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), op) != names.end();
}

// Ops whose result is not a function of their inputs: they draw random numbers.
inline bool draws_random_numbers(std::string_view op) {
  return one_of(op, {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Bernoulli", "Multinomial"});
}

}  // namespace shapeprop
