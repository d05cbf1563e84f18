// The deployment-shape options' values (--set-dim, --input-shape, --dim-range,
// --rename-dim), read into shapeprop::InputShapes. Each reader returns the error's message
// when the text is not what its option takes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "shapeprop/input_shapes.h"

namespace cli {

// The largest value a dim may be given.
inline constexpr int64_t kMaxDimValue = int64_t{1} << 40;

// NAME=VALUE[,NAME=VALUE...]
std::optional<std::string> read_set_dim(std::string_view text, shapeprop::InputShapes& shapes);
// INPUT=D0,D1,... (each a whole number or ?)
std::optional<std::string> read_input_shape(std::string_view text, shapeprop::InputShapes& shapes);
// NAME=MIN..MAX[,NAME=MIN..MAX...]
std::optional<std::string> read_dim_range(std::string_view text, shapeprop::InputShapes& shapes);
// OLD=NEW[,OLD=NEW...]
std::optional<std::string> read_rename_dim(std::string_view text, shapeprop::InputShapes& shapes);

}  // namespace cli
