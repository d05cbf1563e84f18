// Saving models: deterministic bytes; regular files written atomically, devices and
// FIFOs in place, never replaced.
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <thread>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "shapeprop/io.h"
#include "shapeprop/text.h"

namespace shapeprop {

namespace fs = std::filesystem;

namespace {

// Protobuf writes no message of 2 GiB or more. Measuring the model caches the size of
// each of its messages, which the writes below then use (SerializeWithCachedSizes)
// instead of measuring it all again: a tenth of a save's work.
std::optional<Diagnostic> too_large_to_write(const onnx::ModelProto& model) {
  if (model.ByteSizeLong() <= static_cast<size_t>(INT_MAX)) return std::nullopt;
  return Diagnostic::error("model is larger than 2 GiB; protobuf cannot write it as one message (" +
                           std::string(kExternalDataHint) + ")");
}

}  // namespace

Result<std::string> serialize_model(const onnx::ModelProto& model) {
  if (auto large = too_large_to_write(model)) return *large;
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream raw(&bytes);
    google::protobuf::io::CodedOutputStream out(&raw);
    out.SetSerializationDeterministic(true);
    model.SerializeWithCachedSizes(&out);
  }
  return bytes;
}

namespace {

Diagnostic cannot_write(const std::string& target, const std::string& why) {
  return Diagnostic::error("cannot write: " + why).in_file(target);
}

// What goes into an output file descriptor: the errno of the first failure, or 0.
using Contents = std::function<int(int fd)>;

// Writes all of `contents` to `fd`; the errno of the first failure, or 0.
int write_all(int fd, std::string_view contents) {
  for (size_t done = 0; done < contents.size();) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;
    done += static_cast<size_t>(n);
  }
  return 0;
}

// Opens a FIFO for writing, waiting at most `seconds` for a reader (opening it without
// O_NONBLOCK would wait forever; with it, it fails with ENXIO while there is none).
int open_fifo(const fs::path& path, uint32_t seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (true) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0 || errno != ENXIO || std::chrono::steady_clock::now() >= deadline) return fd;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// A character device (/dev/null, /dev/full, a terminal) or a FIFO: written where it is.
Status write_in_place(const fs::path& path, const Contents& contents, bool fifo, uint32_t fifo_wait_seconds) {
  const std::string target = path.string();
  const int fd = fifo ? open_fifo(path, fifo_wait_seconds) : ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    if (fifo && errno == ENXIO)
      return cannot_write(target, "no process opened this FIFO for reading within " +
                                      std::to_string(fifo_wait_seconds) + " s (--max-fifo-wait)");
    return cannot_write(target, std::strerror(errno));
  }
  if (fifo) {  // from here on, wait for the reader like any writer
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
      const int error = errno;
      ::close(fd);
      return cannot_write(target, std::strerror(error));
    }
  }
  if (const int error = contents(fd)) {
    ::close(fd);
    return cannot_write(target, std::strerror(error));
  }
  if (::close(fd) != 0) return cannot_write(target, std::string("close: ") + std::strerror(errno));
  return Ok{};
}

// The file a chain of symbolic links ends at (which need not exist yet), so that
// replacing it replaces the target rather than the link.
Result<fs::path> follow_links(const fs::path& path) {
  fs::path at = path;
  for (int hops = 0; hops < 40; ++hops) {  // as the kernel's ELOOP limit
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(at, ec))) return at;
    const fs::path next = fs::read_symlink(at, ec);
    if (ec) return cannot_write(path.string(), ec.message());
    at = next.is_absolute() ? next : at.parent_path() / next;
  }
  return cannot_write(path.string(), "too many levels of symbolic links");
}

Status write_atomically(const fs::path& path, const Contents& contents);

// write_output, with the contents written by a function (streamed, not held whole).
Status write_to(const fs::path& path, const Contents& contents, const Limits& limits) {
  const std::string target = path.string();
  if (target.empty()) return Diagnostic::error("cannot write: the output path is empty");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return cannot_write(target, std::strerror(errno));
    auto resolved = follow_links(path);  // a link to a file still to be made makes it there
    if (!resolved) return resolved.error();
    return write_atomically(*resolved, contents);
  }
  if (S_ISREG(st.st_mode)) {
    std::error_code ec;
    const fs::path file = fs::canonical(path, ec);  // through links, to the file they name
    return write_atomically(ec ? path : file, contents);
  }
  if (S_ISCHR(st.st_mode)) return write_in_place(path, contents, /*fifo=*/false, limits.fifo_wait_seconds);
  if (S_ISFIFO(st.st_mode)) return write_in_place(path, contents, /*fifo=*/true, limits.fifo_wait_seconds);
  if (S_ISDIR(st.st_mode)) return cannot_write(target, "is a folder");
  return cannot_write(target, std::string("is a ") + (S_ISBLK(st.st_mode) ? "block device" : "socket") +
                                  "; models are written to regular files, character devices and FIFOs");
}

Status write_atomically(const fs::path& path, const Contents& contents) {
  const std::string target = path.string();
  fs::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return Diagnostic::error("cannot write: folder '" + dir.string() + "' does not exist").in_file(target);
  if (fs::is_directory(path, ec)) return Diagnostic::error("cannot write: is a folder").in_file(target);

  // Hidden, beside the target, so that rename stays on one filesystem; the name's start
  // only, so that a target name near the length limit still leaves room.
  std::string tmp_name = ".";
  tmp_name.append(path.filename().string().substr(0, 200)).append(".tmp.XXXXXX");
  std::string tmp = (dir / tmp_name).string();
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return Diagnostic::error(std::string("cannot write: ") + std::strerror(errno)).in_file(target);
  auto fail = [&](const char* what) {
    const std::string why = std::string(what) + ": " + std::strerror(errno);
    ::close(fd);
    ::unlink(tmp.c_str());
    return Diagnostic::error("cannot write: " + why).in_file(target);
  };
  if (const int error = contents(fd)) {
    errno = error;
    return fail("write");
  }
  // mkstemp creates 0600; a model file gets the usual permissions.
  mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0) return fail("chmod");
  if (::fsync(fd) != 0) return fail("fsync");
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return Diagnostic::error(std::string("cannot write: close: ") + std::strerror(errno)).in_file(target);
  }
  if (std::rename(tmp.c_str(), target.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return Diagnostic::error("cannot write: rename: " + why).in_file(target);
  }
  return Ok{};
}

// The file descriptor under write_model's buffer. Every MiB it asks the kernel to
// start writing what came so far back to the disk (sync_file_range, a hint that does not
// wait), so that the fsync before the rename waits for the last chunk rather than for the
// whole file, which for a large model would be most of the write.
class WritebackOutput : public google::protobuf::io::CopyingOutputStream {
 public:
  explicit WritebackOutput(int fd) : fd_(fd) {}
  bool Write(const void* buffer, int size) override {
    if (const int e = write_all(fd_, std::string_view(static_cast<const char*>(buffer), static_cast<size_t>(size)))) {
      error_ = e;
      return false;
    }
    written_ += static_cast<uint64_t>(size);
#ifdef __linux__
    if (written_ - started_ >= kWriteback) {
      // Fails on what is not a file (a FIFO, a device): nothing to write back there.
      ::sync_file_range(fd_, static_cast<off_t>(started_), static_cast<off_t>(written_ - started_),
                        SYNC_FILE_RANGE_WRITE);
      started_ = written_;
    }
#endif
    return true;
  }
  int error() const { return error_; }

 private:
  static constexpr uint64_t kWriteback = uint64_t{1} << 20;
  const int fd_;
  int error_ = 0;
  uint64_t written_ = 0, started_ = 0;
};

// The model's bytes as serialize_model makes them, streamed to `fd` through a small
// buffer rather than held whole beside the model (the largest allocation of a run).
// `model`'s sizes are cached (too_large_to_write), and it is not changed before the write.
int write_model(int fd, const onnx::ModelProto& model) {
  WritebackOutput file(fd);
  google::protobuf::io::CopyingOutputStreamAdaptor raw(&file, 1 << 16);
  {
    google::protobuf::io::CodedOutputStream out(&raw);
    out.SetSerializationDeterministic(true);
    model.SerializeWithCachedSizes(&out);
  }
  if (!raw.Flush()) return file.error() ? file.error() : EIO;
  return 0;
}

}  // namespace

Status write_output(const fs::path& path, std::string_view contents, const Limits& limits) {
  return write_to(path, [contents](int fd) { return write_all(fd, contents); }, limits);
}

Status write_file_atomically(const fs::path& path, std::string_view contents) {
  return write_atomically(path, [contents](int fd) { return write_all(fd, contents); });
}

Status save_model(const onnx::ModelProto& model, const fs::path& path, Format format, const Limits& limits) {
  if (format == Format::Text) return write_output(path, print_model(model), limits);
  if (auto large = too_large_to_write(model)) return Diagnostic(*large).in_file(path.string());
  return write_to(path, [&model](int fd) { return write_model(fd, model); }, limits);
}

}  // namespace shapeprop
