// Reading a model file's bytes with bounds: a regular file larger than the limit is
// refused before it is read; a device or pipe (/dev/zero, /dev/urandom, a FIFO) is read
// in chunks, the buffer growing as data arrives, until the limit is passed or the bytes
// so far can begin no model (model_prefix.h); a FIFO or pipe that stays silent longer
// than the wait limit (or never gets a writer) is given up on instead of blocking forever.
#include "io/read_input.h"
#include "shapeprop/io.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <new>
#include <utility>

namespace shapeprop {

namespace {

// Reads of a device or pipe start at kFirstChunk bytes and double up to kChunk: the
// first bytes decide whether it can be a model at all (/dev/zero is refused after 64 KiB,
// not after a megabyte of zeros has been written into the buffer).
constexpr size_t kChunk = size_t{1} << 20;
constexpr size_t kFirstChunk = size_t{1} << 16;

Diagnostic cannot_read(const std::string& origin, int error) {
  return Diagnostic::error(std::string("cannot read: ") + std::strerror(error)).in_file(origin);
}

Diagnostic too_large(const std::string& origin, uint64_t limit) {
  if (limit == Limits{}.max_input_bytes)  // the default: protobuf's own limit
    return Diagnostic::error("model is larger than 2 GiB; protobuf cannot read it as one message (" +
                           std::string(kExternalDataHint) + ")")
        .in_file(origin);
  return Diagnostic::error("input is larger than the limit of " + std::to_string(limit) + " bytes (--max-input-size)")
      .in_file(origin);
}

// Closes the descriptor when reading ends, however it ends.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// Waits until `fd` can be read (data or end of input); false when nothing came within
// `seconds`.
bool wait_readable(int fd, uint32_t seconds) {
  pollfd p{fd, POLLIN, 0};
  const int timeout_ms = static_cast<int>(seconds > 2'000'000 ? 2'000'000'000u : seconds * 1000u);
  while (true) {
    const int n = ::poll(&p, 1, timeout_ms);
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return true;  // let read() report the error
  }
}

// Reads what is left of `fd` (of mode `mode`; `size`: a regular file's size when opened)
// within the limits, as read_input says.
Result<std::string> read_all(int fd, mode_t mode, uint64_t size, const std::string& origin, const Limits& limits,
                             const PrefixCheck& prefix) {
  std::string bytes;
  try {
    // A regular file is read into exactly its size, and one byte more to see it end (a
    // file that grows meanwhile is read on in chunks): no reallocation, no copy.
    const size_t expected = S_ISREG(mode) ? static_cast<size_t>(size) + 1 : 0;
    bytes.reserve(expected);
    size_t got = 0;
    size_t chunk = S_ISREG(mode) ? kChunk : kFirstChunk;
    bool waited_for_writer = false;
    while (true) {
      // One byte past the limit is enough to know it is passed.
      const uint64_t room = limits.max_input_bytes + 1 - got;
      size_t want = room < chunk ? static_cast<size_t>(room) : chunk;
      chunk = std::min(chunk * 2, kChunk);
      if (got < expected) want = std::min(want, expected - got);
      if (bytes.size() < got + want) bytes.resize(got + want);
      const ssize_t n = ::read(fd, bytes.data() + got, want);
      if (n > 0) {
        got += static_cast<size_t>(n);
        if (got > limits.max_input_bytes) return too_large(origin, limits.max_input_bytes);
        if (prefix && !S_ISREG(mode))
          if (auto refused = prefix(std::string_view(bytes.data(), got))) return *refused;
      } else if (n == 0) {
        // A FIFO that no writer has opened yet reads as ended: wait for one, once.
        if (!S_ISFIFO(mode) || got > 0 || waited_for_writer) break;
        waited_for_writer = true;
        if (!wait_readable(fd, limits.fifo_wait_seconds))
          return Diagnostic::error("nothing was written to this FIFO within " +
                                   std::to_string(limits.fifo_wait_seconds) + " s (--max-fifo-wait)")
              .in_file(origin);
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {  // a writer is there, with no data yet
        if (!wait_readable(fd, limits.fifo_wait_seconds))
          return Diagnostic::error("no data came from this FIFO for " + std::to_string(limits.fifo_wait_seconds) +
                                   " s (--max-fifo-wait)")
              .in_file(origin);
      } else if (errno != EINTR) {
        return cannot_read(origin, errno);
      }
    }
    bytes.resize(got);
  } catch (const std::bad_alloc&) {
    return Diagnostic::error("cannot read: out of memory after " + std::to_string(bytes.size()) + " bytes")
        .in_file(origin);
  }
  return bytes;
}

}  // namespace

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

InputFile::InputFile(InputFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), size_(other.size_), origin_(std::move(other.origin_)) {}

Result<size_t> InputFile::read_at(uint64_t offset, char* out, size_t n) const {
  while (true) {
    const ssize_t got = ::pread(fd_, out, n, static_cast<off_t>(offset));
    if (got >= 0) return static_cast<size_t>(got);
    if (errno != EINTR) return cannot_read(origin_, errno);
  }
}

Result<std::string> InputFile::read_whole(const Limits& limits) const {
  if (::lseek(fd_, 0, SEEK_SET) != 0) return cannot_read(origin_, errno);
  return read_all(fd_, S_IFREG, size_, origin_, limits, {});
}

Result<Input> open_input(const std::filesystem::path& path, const Limits& limits, const PrefixCheck& prefix) {
  const std::string origin = path.string();
  // Without O_NONBLOCK, opening a FIFO that has no writer blocks until one comes.
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) return cannot_read(origin, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return cannot_read(origin, errno);
  if (S_ISDIR(st.st_mode)) return Diagnostic::error("is a folder, not a model file").in_file(origin);
  if (!S_ISFIFO(st.st_mode)) {
    // Files and devices block the ordinary way (a device such as /dev/zero never waits).
    const int flags = ::fcntl(fd.get(), F_GETFL);
    if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) return cannot_read(origin, errno);
  }
  if (S_ISREG(st.st_mode)) {
    if (static_cast<uint64_t>(st.st_size) > limits.max_input_bytes) return too_large(origin, limits.max_input_bytes);
    return Input(InputFile(fd.release(), static_cast<uint64_t>(st.st_size), origin));
  }
  auto bytes = read_all(fd.get(), st.st_mode, 0, origin, limits, prefix);
  if (!bytes) return bytes.error();
  return Input(std::move(*bytes));
}

Result<std::string> read_input(const std::filesystem::path& path, const Limits& limits, const PrefixCheck& prefix) {
  auto input = open_input(path, limits, prefix);
  if (!input) return input.error();
  if (auto* bytes = std::get_if<std::string>(&*input)) return std::move(*bytes);
  return std::get<InputFile>(*input).read_whole(limits);
}

}  // namespace shapeprop
