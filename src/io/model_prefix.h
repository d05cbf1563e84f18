// Whether the first bytes of an input whose size is not known beforehand (a device, a
// FIFO, a pipe) can begin a model, checked after every chunk read so that /dev/zero or
// /dev/urandom end the reading at once instead of filling the limit (2 GiB) first.
//
// A serialized model begins with its ir_version, and holds none but ModelProto's fields 1-6
// and 8 before its graph (field 7), each with its wire type: protobuf writers put the
// fields in the order of their numbers (a few in the order onnx.proto declares them,
// where opset_import, field 8, comes second), then the fields they keep but do not know;
// ir_version is one every model has, and so is the graph (a model without them is
// refused anyway). All along, the bytes must be well-formed protobuf along ONNX's schema
// (wire_scan.h). So a stream of random bytes is refused within its first bytes, nearly
// always its first one; only what a serialized model's first fields can be is read on. ONNX text begins, after blanks and '#' comments, with '<'
// (the model's header) or a name (its graph), and outside string literals, quoted names
// and comments holds printable ASCII and blanks only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "io/wire_scan.h"
#include "shapeprop/diagnostics.h"
#include "shapeprop/io.h"
#include "shapeprop/limits.h"

namespace shapeprop {

// Whether ONNX text can begin with these bytes' first one that is not blank (load_model
// reads a file without a telling extension as text when it does). False when all are blank.
bool begins_text(std::string_view bytes);

class ModelPrefix {
 public:
  // `format`: what the input's name says it holds; nullopt when either may come.
  ModelPrefix(std::string origin, std::optional<Format> format, const Limits& limits);

  // `bytes`: all the input's bytes read so far (each call passes at least those of the
  // last). An error naming the place when they cannot begin a model; nullopt while
  // they can.
  std::optional<Diagnostic> check(std::string_view bytes);

 private:
  std::optional<Diagnostic> check_binary(std::string_view bytes);
  std::optional<Diagnostic> check_text(std::string_view bytes);

  const std::string origin_;
  std::optional<Format> format_;
  const Limits limits_;
  WireScan wire_;
  // Where the fields before the graph stand: the end of the last one read.
  bool graph_begun_ = false;
  uint64_t header_end_ = 0;
  // Where the text check stands: the next byte to look at, its line and column, and what
  // it lies in.
  enum class Text { Start, StartComment, Code, Comment, Quoted, Escaped };
  Text text_ = Text::Start;
  char quote_ = 0;
  uint64_t next_ = 0;
  int line_ = 1;
  int column_ = 0;
};

}  // namespace shapeprop
