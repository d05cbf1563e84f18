// The bytes of a model file, read within the input limits (see read_input.cc).
#pragma once

#include <filesystem>
#include <string>

#include "shapeprop/diagnostics.h"
#include "shapeprop/limits.h"

namespace shapeprop {

// Reads the whole file at `path`: a regular file, a device, a FIFO or a pipe. Fails with
// a one-line diagnostic naming the file when it cannot be read, is a folder, holds more
// than limits.max_input_bytes, or is a FIFO that stays silent limits.fifo_wait_seconds.
Result<std::string> read_input(const std::filesystem::path& path, const Limits& limits);

}  // namespace shapeprop
