// Model I/O: load binary (.onnx) or text (.onnxtxt, ONNX's text syntax) models, and save
// them atomically. Errors come back as Diagnostics naming the file (and, for text, the
// line and column). Weights stored as external data stay references: they are never read,
// and a location that leaves the model's folder is an error.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "onnx/onnx_pb.h"
#include "shapeprop/diagnostics.h"
#include "shapeprop/limits.h"

namespace shapeprop {

enum class Format { Binary, Text };

// .onnx/.pb -> Binary; .onnxtxt/.onnxtext/.txt -> Text; anything else -> nullopt.
std::optional<Format> format_for_path(const std::filesystem::path& path);

// Parses ONNX text syntax. `origin` names the source in diagnostics. Text that nests
// deeper than `limits` allow is refused before ONNX's parser (which recurses on every
// level) sees it.
Result<onnx::ModelProto> parse_model_text(std::string_view text, std::string_view origin = "<text>",
                                          const Limits& limits = {});

// Parses one function in ONNX text syntax (as torchlib's function library is written).
Result<onnx::FunctionProto> parse_function_text(std::string_view text, std::string_view origin = "<text>",
                                                const Limits& limits = {});

// Parses a serialized ModelProto. Rejects what protobuf accepts but is no model
// (an empty file, random bytes that happen to decode, a model without a graph), and
// models that nest deeper than `limits` allow; protobuf's recursion limit is raised to
// what the model needs within them.
Result<onnx::ModelProto> parse_model_binary(std::string_view bytes, std::string_view origin = "<bytes>",
                                            const Limits& limits = {});

// Loads a model file (a regular file, a device or a FIFO, read within
// limits.max_input_bytes and limits.fifo_wait_seconds); the format comes from the
// extension, or is sniffed from the content when the extension says nothing. Also checks
// external-data locations.
Result<onnx::ModelProto> load_model(const std::filesystem::path& path, const Limits& limits = {});

// Every tensor stored as external data (initializers, attribute tensors, in subgraphs and
// function bodies) must name a relative location inside `model_dir`, after resolving
// symbolic links. The data itself is never read.
Status check_external_data(const onnx::ModelProto& model, const std::filesystem::path& model_dir,
                           std::string_view origin);

// What a model over protobuf's 2 GiB limit needs, as errors about one say.
inline constexpr const char* kExternalDataHint =
    "store the weights as external data: torch.onnx.export(..., external_data=True), or "
    "onnx.save_model(model, path, save_as_external_data=True)";

// A model read from `input_dir` and written into `output_dir`: every external-data location
// whose file exists relative to `input_dir` must exist relative to `output_dir` too (the same
// folder, or the weight files copied or linked beside the output), since a location is
// relative to the model's own folder. Fails naming the first tensor whose weights the
// output would lose. Nothing is read.
Status check_external_data_kept(const onnx::ModelProto& model, const std::filesystem::path& input_dir,
                                const std::filesystem::path& output_dir, std::string_view output);

// Serializes deterministically (byte-identical output for equal models).
Result<std::string> serialize_model(const onnx::ModelProto& model);

// Writes the model to `path` (see write_output). On failure nothing is left behind.
Status save_model(const onnx::ModelProto& model, const std::filesystem::path& path, Format format,
                  const Limits& limits = {});

// Writes `contents` to `path`. A regular file (or a new one) is written atomically: a
// temporary file beside it, then rename; a symbolic link is followed, so that its target
// is what gets replaced. A character device or a FIFO is written in place, never
// replaced (a FIFO that no process opens for reading within limits.fifo_wait_seconds is
// an error). Anything else (a folder, a block device, a socket) is refused. Every write
// is checked.
Status write_output(const std::filesystem::path& path, std::string_view contents, const Limits& limits = {});

// Writes `contents` to `path` atomically (a temporary file beside it, then rename).
Status write_file_atomically(const std::filesystem::path& path, std::string_view contents);

}  // namespace shapeprop
