#include "shape_options.h"

#include <charconv>
#include <vector>

namespace cli {

namespace {

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  for (size_t at = 0;;) {
    const size_t end = text.find(sep, at);
    out.push_back(text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
    if (end == std::string_view::npos) return out;
    at = end + 1;
  }
}

std::optional<int64_t> dim_value(std::string_view text) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < 0 || v > kMaxDimValue)
    return std::nullopt;
  return v;
}

// NAME=REST, NAME not empty: (NAME, REST); split at the first '=' (at the last with `last`).
std::optional<std::pair<std::string, std::string_view>> assignment(std::string_view item, bool last = false) {
  const size_t eq = last ? item.rfind('=') : item.find('=');
  if (eq == std::string_view::npos || eq == 0) return std::nullopt;
  return std::pair{std::string(item.substr(0, eq)), item.substr(eq + 1)};
}

const std::string kWhole = " (a whole number from 0 to " + std::to_string(kMaxDimValue) + ")";

}  // namespace

std::optional<std::string> read_set_dim(std::string_view text, shapeprop::InputShapes& shapes) {
  for (std::string_view item : split(text, ',')) {
    auto a = assignment(item);
    auto v = a ? dim_value(a->second) : std::nullopt;
    if (!v)
      return "--set-dim takes NAME=VALUE[,NAME=VALUE...]" + kWhole + ", as in batch=1,seq=128, not " + quoted(item);
    for (const auto& [name, value] : shapes.dims)
      if (name == a->first && value != *v)
        return "--set-dim gives dim " + quoted(name) + " two values, " + std::to_string(value) + " and " +
               std::to_string(*v);
    shapes.dims.emplace_back(a->first, *v);
  }
  return std::nullopt;
}

std::optional<std::string> read_input_shape(std::string_view text, shapeprop::InputShapes& shapes) {
  auto a = assignment(text, /*last=*/true);
  const std::string usage = "--input-shape takes INPUT=D0,D1,... with each D a whole number or ? (the dim as "
                            "declared), as in x=1,3,224,224, not " + quoted(text);
  if (!a || a->second.empty()) return usage;
  std::vector<std::optional<int64_t>> dims;
  for (std::string_view d : split(a->second, ',')) {
    if (d == "?") {
      dims.emplace_back();
    } else if (auto v = dim_value(d)) {
      dims.emplace_back(*v);
    } else {
      return usage;
    }
  }
  for (const auto& [input, given] : shapes.inputs)
    if (input == a->first) return "--input-shape gives input " + quoted(input) + " twice";
  shapes.inputs.emplace_back(a->first, std::move(dims));
  return std::nullopt;
}

std::optional<std::string> read_dim_range(std::string_view text, shapeprop::InputShapes& shapes) {
  for (std::string_view item : split(text, ',')) {
    auto a = assignment(item);
    const size_t dots = a ? a->second.find("..") : std::string_view::npos;
    auto lo = dots == std::string_view::npos ? std::nullopt : dim_value(a->second.substr(0, dots));
    auto hi = dots == std::string_view::npos ? std::nullopt : dim_value(a->second.substr(dots + 2));
    if (!lo || !hi)
      return "--dim-range takes NAME=MIN..MAX[,...]" + kWhole + ", as in seq=1..128, not " + quoted(item);
    if (*lo > *hi) return "--dim-range " + quoted(item) + " is empty: MIN is above MAX";
    auto [it, fresh] = shapes.ranges.try_emplace(a->first, shapeprop::DimRange{*lo, *hi});
    if (!fresh && !(it->second == shapeprop::DimRange{*lo, *hi}))
      return "--dim-range gives dim " + quoted(a->first) + " two ranges";
  }
  return std::nullopt;
}

std::optional<std::string> read_rename_dim(std::string_view text, shapeprop::InputShapes& shapes) {
  for (std::string_view item : split(text, ',')) {
    auto a = assignment(item);
    if (!a || a->second.empty() || a->second.find('=') != std::string_view::npos)
      return "--rename-dim takes OLD=NEW[,OLD=NEW...], as in seq=sequence, not " + quoted(item);
    shapes.renames.emplace_back(a->first, std::string(a->second));
  }
  return std::nullopt;
}

}  // namespace cli
