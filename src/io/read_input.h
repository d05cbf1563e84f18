// The bytes of a model file, read within the input limits (see read_input.cc).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "shapeprop/diagnostics.h"
#include "shapeprop/limits.h"

namespace shapeprop {

// Asked, after every chunk of an input whose size is not known beforehand, whether the
// bytes read so far (all of them) can still begin what is read: an error ends the reading.
using PrefixCheck = std::function<std::optional<Diagnostic>(std::string_view bytes)>;

// Reads the whole file at `path`: a regular file, a device, a FIFO or a pipe. Fails with
// a one-line diagnostic naming the file when it cannot be read, is a folder, holds more
// than limits.max_input_bytes, is a FIFO that stays silent limits.fifo_wait_seconds, or
// is no regular file and `prefix` refuses its first bytes.
Result<std::string> read_input(const std::filesystem::path& path, const Limits& limits,
                               const PrefixCheck& prefix = {});

}  // namespace shapeprop
