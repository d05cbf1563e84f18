// The bytes of a model file, read within the input limits (see read_input.cc).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "shapeprop/diagnostics.h"
#include "shapeprop/limits.h"

namespace shapeprop {

// Asked, after every chunk of an input whose size is not known beforehand, whether the
// bytes read so far (all of them) can still begin what is read: an error ends the reading.
using PrefixCheck = std::function<std::optional<Diagnostic>(std::string_view bytes)>;

// A regular file opened for reading, to be read in pieces from any offset.
class InputFile {
 public:
  InputFile(int fd, uint64_t size, std::string origin) : fd_(fd), size_(size), origin_(std::move(origin)) {}
  ~InputFile();
  InputFile(InputFile&& other) noexcept;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  InputFile& operator=(InputFile&&) = delete;

  int fd() const { return fd_; }
  // Its size when it was opened.
  uint64_t size() const { return size_; }
  // Up to n bytes from `offset` on into `out`: how many (0 past the end), or an error
  // naming the file.
  Result<size_t> read_at(uint64_t offset, char* out, size_t n) const;
  // All of it, within the limits (a file that grew since it was opened is read on).
  Result<std::string> read_whole(const Limits& limits) const;

 private:
  int fd_;
  uint64_t size_;
  std::string origin_;
};

// An input: a regular file left open, or the bytes of anything else (a device, a FIFO, a
// pipe), read whole as read_input does.
using Input = std::variant<InputFile, std::string>;

// Opens `path`: a regular file larger than limits.max_input_bytes is refused before it is
// read; anything else is read as read_input says.
Result<Input> open_input(const std::filesystem::path& path, const Limits& limits, const PrefixCheck& prefix = {});

// Reads the whole file at `path`: a regular file, a device, a FIFO or a pipe. Fails with
// a one-line diagnostic naming the file when it cannot be read, is a folder, holds more
// than limits.max_input_bytes, is a FIFO that stays silent limits.fifo_wait_seconds, or
// is no regular file and `prefix` refuses its first bytes.
Result<std::string> read_input(const std::filesystem::path& path, const Limits& limits,
                               const PrefixCheck& prefix = {});

}  // namespace shapeprop
