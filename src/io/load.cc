// Loading models from binary protobuf or ONNX text.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <regex>
#include <sstream>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "io/model_prefix.h"
#include "io/read_input.h"
#include "io/syntax_depth.h"
#include "onnx/defs/parser.h"
#include "shapeprop/io.h"
#include "shapeprop/version.h"
#include "support/subgraphs.h"
#include "text_internal.h"

namespace shapeprop {

namespace fs = std::filesystem;

std::optional<Format> format_for_path(const fs::path& path) {
  const std::string ext = path.extension().string();
  if (ext == ".onnx" || ext == ".pb") return Format::Binary;
  if (ext == ".onnxtxt" || ext == ".onnxtext" || ext == ".txt") return Format::Text;
  return std::nullopt;
}

namespace {

// Turns ONNX's "[ParseError at position (line: L column: C)]\nError context: X\nMessage"
// into a one-line diagnostic at file:L:C.
Diagnostic parse_error(const std::string& onnx_message, std::string_view origin) {
  Diagnostic d = Diagnostic::error("");
  d.file = std::string(origin);
  static const std::regex where(R"(\(line: (\d+) column: (\d+)\))");
  std::smatch m;
  if (std::regex_search(onnx_message, m, where)) {
    d.line = std::stoi(m[1]);
    d.column = std::stoi(m[2]);
  }
  std::string context, message;
  std::istringstream lines(onnx_message);
  for (std::string l; std::getline(lines, l);) {
    if (l.rfind("[ParseError", 0) == 0) continue;
    if (l.rfind("Error context:", 0) == 0)
      context = l.substr(14);
    else if (!l.empty())
      message += (message.empty() ? "" : " ") + l;
  }
  auto trim = [](std::string s) {
    s.erase(0, s.find_first_not_of(" \t"));
    s.erase(s.find_last_not_of(" \t") + 1);
    return s;
  };
  d.message = "syntax error: " + (message.empty() ? std::string("cannot parse") : trim(message));
  if (!trim(context).empty()) d.message += " (in \"" + trim(context) + "\")";
  return d;
}

std::pair<int, int> line_column(std::string_view text, size_t offset) {
  int line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

}  // namespace

namespace {

// ONNX's parser takes a C string, which ends at the first NUL byte, and a string literal
// may hold one (a doc_string); this one's text ends where the text does.
class SizedParser : public onnx::OnnxParser {
 public:
  explicit SizedParser(const std::string& text) : onnx::OnnxParser(text.c_str()) { end_ = text.data() + text.size(); }
};

// Parses text into a ModelProto or FunctionProto with ONNX's parser, after rewriting
// quoted names (see text.h) into identifiers ONNX's parser reads.
template <class Proto>
Result<Proto> parse_text(std::string_view text, std::string_view origin, const char* what, const Limits& limits) {
  std::string rewritten;
  text_detail::QuotedNames names;
  size_t bad_quote = 0;
  if (!text_detail::rewrite_quoted_names(text, rewritten, names, bad_quote)) {
    auto [line, column] = line_column(text, bad_quote);
    return Diagnostic::error("syntax error: quoted name is not closed").in_file(std::string(origin), line, column);
  }
  if (rewritten.find_first_not_of(" \t\r\n") == std::string::npos)
    return Diagnostic::error(std::string("empty file: no ") + what).in_file(std::string(origin));
  // ONNX's parser recurses on every bracket: refuse what would overflow its stack.
  if (auto deep = check_text_depth(rewritten, origin, limits)) return *deep;
  Proto proto;
  try {
    SizedParser parser(rewritten);
    auto status = parser.Parse(proto);
    if (!status.IsOK()) return parse_error(status.ErrorMessage(), origin);
  } catch (const std::exception& e) {  // the parser's std::stoi/stof throw on bad literals
    return Diagnostic::error(std::string("syntax error: bad literal (") + e.what() + ")").in_file(std::string(origin));
  }
  text_detail::restore_quoted_names(proto, names);
  return proto;
}


// Visits every tensor a model holds: initializers and attribute tensors, in subgraphs
// and function bodies.
template <class Fn>
void for_each_tensor(const onnx::ModelProto& model, Fn&& fn) {
  walk_model(
      model,
      [&fn](const onnx::GraphProto& g) {
        for (const auto& t : g.initializer()) fn(t);
        for (const auto& s : g.sparse_initializer()) {
          fn(s.values());
          fn(s.indices());
        }
      },
      [&fn](const onnx::NodeProto& n) {
        for (const auto& a : n.attribute()) {
          if (a.has_t()) fn(a.t());
          for (const auto& t : a.tensors()) fn(t);
          if (a.has_sparse_tensor()) {
            fn(a.sparse_tensor().values());
            fn(a.sparse_tensor().indices());
          }
          for (const auto& st : a.sparse_tensors()) {
            fn(st.values());
            fn(st.indices());
          }
        }
      });
}


// A tensor whose data_type no ONNX version defines (protobuf keeps any number there, and
// ONNX's checker lets one with raw_data through): nothing can read or print it.
std::optional<Diagnostic> unknown_data_type(const onnx::ModelProto& model, std::string_view origin) {
  std::optional<Diagnostic> error;
  for_each_tensor(model, [&](const onnx::TensorProto& t) {
    if (error || t.data_type() == onnx::TensorProto::UNDEFINED || onnx::TensorProto_DataType_IsValid(t.data_type())) return;
    error = Diagnostic::error("not an ONNX model: tensor '" + t.name() + "' has data_type " + std::to_string(t.data_type()) +
                              ", which is no element type of ONNX " + onnx_version())
                .in_file(std::string(origin));
  });
  return error;
}
}  // namespace

Result<onnx::ModelProto> parse_model_text(std::string_view text, std::string_view origin, const Limits& limits) {
  return parse_text<onnx::ModelProto>(text, origin, "model", limits);
}

Result<onnx::FunctionProto> parse_function_text(std::string_view text, std::string_view origin, const Limits& limits) {
  return parse_text<onnx::FunctionProto>(text, origin, "function", limits);
}

namespace {

Diagnostic too_large_to_read(const std::string& file) {
  return Diagnostic::error("model is larger than 2 GiB; protobuf cannot read it as one message (" +
                           std::string(kExternalDataHint) + ")")
      .in_file(file);
}

// Protobuf's default recursion limit (100) rejects ~30 nested subgraphs as malformed; the
// model's own depth, once it is known to be within the limits, is what it needs.
Result<onnx::ModelProto> parse_coded(google::protobuf::io::CodedInputStream& in, int recursion_limit,
                                     std::string_view origin) {
  const std::string file(origin);
  onnx::ModelProto model;
  in.SetRecursionLimit(recursion_limit);
  if (!model.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
    return Diagnostic::error("not an ONNX model: the protobuf is malformed or truncated").in_file(file);
  if (!model.has_graph())
    return Diagnostic::error("not an ONNX model: it has no graph").in_file(file);
  if (!model.has_ir_version() || model.ir_version() <= 0)
    return Diagnostic::error("not an ONNX model: ir_version is missing").in_file(file);
  if (auto unknown = unknown_data_type(model, origin)) return *unknown;
  return model;
}

// A model protobuf parsed within the message depth: refused still where its subgraphs nest
// deeper than the limit, as the depth scan would have refused it.
Result<onnx::ModelProto> checked_depth(Result<onnx::ModelProto> model, std::string_view origin, const Limits& limits) {
  if (auto error = parsed_subgraph_depth_error(*model, origin, limits)) return *error;
  return model;
}

// A binary model in a regular file, parsed by protobuf as it is read through a small
// buffer rather than held whole beside the model it becomes (the file's bytes would be a
// copy of the weights, and zeroing and filling a buffer of them a cost of its own).
// Protobuf's recursion limit keeps its parser within limits.max_syntax_depth(); only when
// it fails is the file read again by the depth scan, which tells a model nested too deep
// (and says which limit) from bytes that are no model. Were the file to change in
// between, the scan's answer is still only about what it read.
Result<onnx::ModelProto> parse_model_file(const InputFile& input, std::string_view origin, const Limits& limits) {
  const std::string file(origin);
  if (input.size() == 0) return Diagnostic::error("empty file: no model").in_file(file);
  if (input.size() > static_cast<uint64_t>(INT_MAX)) return too_large_to_read(file);
  if (::lseek(input.fd(), 0, SEEK_SET) != 0)
    return Diagnostic::error(std::string("cannot read: ") + std::strerror(errno)).in_file(file);
  Result<onnx::ModelProto> model = Diagnostic::error("");
  {
    google::protobuf::io::FileInputStream stream(input.fd(), 1 << 18);
    google::protobuf::io::CodedInputStream in(&stream);
    in.SetTotalBytesLimit(static_cast<int>(std::min<uint64_t>(limits.max_input_bytes, INT_MAX)));
    model = parse_coded(in, binary_parse_limit(limits), origin);
    if (stream.GetErrno() != 0)
      return Diagnostic::error(std::string("cannot read: ") + std::strerror(stream.GetErrno())).in_file(file);
  }
  if (model) return checked_depth(std::move(model), origin, limits);
  auto scanned = binary_recursion_limit(
      [&input](uint64_t offset, char* out, size_t n) { return input.read_at(offset, out, n); }, input.size(), origin,
      limits);
  if (!scanned) return scanned.error();
  return model;
}

}  // namespace

Result<onnx::ModelProto> parse_model_binary(std::string_view bytes, std::string_view origin, const Limits& limits) {
  const std::string file(origin);
  if (bytes.empty()) return Diagnostic::error("empty file: no model").in_file(file);
  if (bytes.size() > static_cast<size_t>(INT_MAX)) return too_large_to_read(file);
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  auto model = parse_coded(in, binary_parse_limit(limits), origin);
  if (model) return checked_depth(std::move(model), origin, limits);
  // Told apart as parse_model_file does.
  auto scanned = binary_recursion_limit(bytes, origin, limits);
  if (!scanned) return scanned.error();
  return model;
}

Result<onnx::ModelProto> load_model(const fs::path& path, const Limits& limits) {
  const std::string origin = path.string();
  auto format = format_for_path(path);
  ModelPrefix prefix(origin, format, limits);
  auto input = open_input(path, limits, [&prefix](std::string_view bytes) { return prefix.check(bytes); });
  if (!input) return input.error();

  Result<onnx::ModelProto> model = Diagnostic::error("");
  if (auto* file = std::get_if<InputFile>(&*input)) {
    if (!format) {  // told by its first byte that is not blank
      char first[4096];
      for (uint64_t at = 0;;) {
        auto got = file->read_at(at, first, sizeof first);
        if (!got) return got.error();
        const std::string_view bytes(first, *got);
        if (*got == 0 || bytes.find_first_not_of(" \t\n\v\f\r") != std::string_view::npos) {
          format = begins_text(bytes) ? Format::Text : Format::Binary;
          break;
        }
        at += *got;
      }
    }
    if (*format == Format::Binary) {
      model = parse_model_file(*file, origin, limits);
    } else {
      auto text = file->read_whole(limits);
      if (!text) return text.error();
      model = parse_model_text(*text, origin, limits);
    }
  } else {
    const std::string& bytes = std::get<std::string>(*input);
    if (!format) format = begins_text(bytes) ? Format::Text : Format::Binary;
    model = *format == Format::Text ? parse_model_text(bytes, origin, limits) : parse_model_binary(bytes, origin, limits);
  }
  if (!model) return model;
  fs::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  if (auto ext = check_external_data(*model, dir, origin); !ext) return ext.error();
  return model;
}


Status check_external_data(const onnx::ModelProto& model, const fs::path& model_dir, std::string_view origin) {
  std::optional<Diagnostic> error;
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(fs::absolute(model_dir, ec), ec);
  auto check = [&](const onnx::TensorProto& t) {
    if (error || t.data_location() != onnx::TensorProto::EXTERNAL) return;
    std::string location;
    for (const auto& kv : t.external_data())
      if (kv.key() == "location") location = kv.value();
    auto fail = [&](const std::string& why) {
      error = Diagnostic::error("tensor '" + t.name() + "': external data location '" + location + "' " + why)
                  .in_file(std::string(origin));
    };
    const fs::path loc(location);
    if (location.empty()) return fail("is empty");
    if (loc.is_absolute() || loc.has_root_name() || loc.has_root_directory()) return fail("is absolute; it must be relative to the model's folder");
    for (const auto& part : loc) {
      if (part == "..") return fail("leaves the model's folder ('..')");
      // No file can have such a name, so the path cannot be resolved either.
      if (part.native().size() > NAME_MAX)
        return fail("has a component of " + std::to_string(part.native().size()) + " bytes; file names have at most " +
                    std::to_string(NAME_MAX));
    }
    // Symbolic links may still lead out of the folder; compare the resolved paths.
    const fs::path resolved = fs::weakly_canonical(root / loc, ec);
    if (ec) return fail("cannot be resolved: " + ec.message());
    auto [r, _] = std::mismatch(root.begin(), root.end(), resolved.begin(), resolved.end());
    if (r != root.end()) return fail("leaves the model's folder through a symbolic link");
  };
  for_each_tensor(model, check);
  if (error) return *error;
  return Ok{};
}

Status check_external_data_kept(const onnx::ModelProto& model, const fs::path& input_dir, const fs::path& output_dir,
                                std::string_view output) {
  std::error_code ec;
  const fs::path from = fs::weakly_canonical(fs::absolute(input_dir, ec), ec);
  const fs::path to = fs::weakly_canonical(fs::absolute(output_dir, ec), ec);
  if (from == to) return Ok{};
  std::optional<Diagnostic> error;
  for_each_tensor(model, [&](const onnx::TensorProto& t) {
    if (error || t.data_location() != onnx::TensorProto::EXTERNAL) return;
    for (const auto& kv : t.external_data()) {
      if (kv.key() != "location") continue;
      std::error_code e;
      if (fs::exists(from / kv.value(), e) && !fs::exists(to / kv.value(), e))
        error = Diagnostic::error("tensor '" + t.name() + "': its weights are external data, '" + kv.value() +
                                  "' beside the input in '" + from.string() + "', which the output in '" + to.string() +
                                  "' would not find (a location is relative to the model's folder): write the output "
                                  "into the input's folder, or put the weight files beside it first")
                    .in_file(std::string(output));
    }
  });
  if (error) return *error;
  return Ok{};
}

}  // namespace shapeprop
