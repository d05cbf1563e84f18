// Saving models: deterministic bytes, written atomically.
#include <climits>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "shapeprop/io.h"
#include "shapeprop/text.h"

namespace shapeprop {

namespace fs = std::filesystem;

Result<std::string> serialize_model(const onnx::ModelProto& model) {
  const size_t size = model.ByteSizeLong();
  if (size > static_cast<size_t>(INT_MAX))
    return Diagnostic::error("model is larger than 2 GiB; protobuf cannot write it as one message "
                             "(store the weights as external data)");
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream raw(&bytes);
    google::protobuf::io::CodedOutputStream out(&raw);
    out.SetSerializationDeterministic(true);
    model.SerializeToCodedStream(&out);
  }
  return bytes;
}

Status write_file_atomically(const fs::path& path, std::string_view contents) {
  const std::string target = path.string();
  fs::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return Diagnostic::error("cannot write: folder '" + dir.string() + "' does not exist").in_file(target);
  if (fs::is_directory(path, ec)) return Diagnostic::error("cannot write: is a folder").in_file(target);

  std::string tmp_name = ".";  // hidden, beside the target, so that rename stays on one filesystem
  tmp_name.append(path.filename().string()).append(".tmp.XXXXXX");
  std::string tmp = (dir / tmp_name).string();
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return Diagnostic::error(std::string("cannot write: ") + std::strerror(errno)).in_file(target);
  auto fail = [&](const char* what) {
    const std::string why = std::string(what) + ": " + std::strerror(errno);
    ::close(fd);
    ::unlink(tmp.c_str());
    return Diagnostic::error("cannot write: " + why).in_file(target);
  };
  for (size_t done = 0; done < contents.size();) {
    ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("write");
    }
    done += static_cast<size_t>(n);
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

Status save_model(const onnx::ModelProto& model, const fs::path& path, Format format) {
  if (format == Format::Text) return write_file_atomically(path, print_model(model));
  auto bytes = serialize_model(model);
  if (!bytes) return Diagnostic(bytes.error()).in_file(path.string());
  return write_file_atomically(path, *bytes);
}

}  // namespace shapeprop
