// Pieces shared by the text printer, the text parser and the projection.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

#include "onnx/onnx_pb.h"

namespace shapeprop::text_detail {

// A name as the printer writes it: bare when ONNX's parser reads it back unchanged,
// otherwise in single quotes (shapeprop's extension of the syntax).
std::string printable_name(const std::string& name);

// A node domain: bare when every dot-separated part is a bare name, else quoted whole.
std::string printable_domain(const std::string& domain);

// A type ONNX's text syntax can spell: every element type in it, at any depth of nesting,
// has a name ONNX's parser reads (0, "undefined", has none). Value infos whose type is
// not are written without it (and text_projection drops it).
bool printable_type(const onnx::TypeProto& type);

// Maps the identifiers that stand for quoted names back to the names.
using QuotedNames = std::unordered_map<std::string, std::string>;

// Replaces every 'quoted name' in `text` (outside string literals and comments) by a
// fresh identifier, recorded in `names`. Returns false, with the 0-based offset of the
// opening quote in `error_offset`, when a quote is not closed.
bool rewrite_quoted_names(std::string_view text, std::string& out, QuotedNames& names, size_t& error_offset);

// Puts the quoted names back into every name field of the model.
void restore_quoted_names(onnx::ModelProto& model, const QuotedNames& names);
void restore_quoted_names(onnx::FunctionProto& function, const QuotedNames& names);

}  // namespace shapeprop::text_detail
