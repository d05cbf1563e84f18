#include "report/json_writer.h"

#include <cmath>
#include <cstdio>

namespace shapeprop::report {

namespace {

// The length of the valid UTF-8 sequence starting at s[i], or 0 if there is none.
size_t utf8_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  size_t n;
  uint32_t min;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) n = 2, min = 0x80;
  else if ((c & 0xF0) == 0xE0) n = 3, min = 0x800;
  else if ((c & 0xF8) == 0xF0) n = 4, min = 0x10000;
  else return 0;
  if (i + n > s.size()) return 0;
  uint32_t code = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8.
  if (code < min || (code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF) return 0;
  return n;
}

}  // namespace

std::string json_quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; ++i; continue;
      case '\\': out += "\\\\"; ++i; continue;
      case '\n': out += "\\n"; ++i; continue;
      case '\t': out += "\\t"; ++i; continue;
      case '\r': out += "\\r"; ++i; continue;
      default: break;
    }
    if (c < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
      ++i;
      continue;
    }
    const size_t n = utf8_length(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  out += '"';
  return out;
}

void JsonWriter::newline() {
  out_ += '\n';
  out_.append(2 * open_.size(), ' ');
}

void JsonWriter::start_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (open_.empty()) return;
  if (!open_.back().empty) out_ += ',';
  open_.back().empty = false;
  newline();
}

JsonWriter& JsonWriter::begin_object() {
  start_value();
  out_ += '{';
  open_.push_back({false, true});
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  start_value();
  out_ += '[';
  open_.push_back({true, true});
  return *this;
}

JsonWriter& JsonWriter::end() {
  const Level level = open_.back();
  open_.pop_back();
  if (!level.empty) newline();
  out_ += level.array ? ']' : '}';
  if (open_.empty()) out_ += '\n';
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  start_value();
  out_ += json_quote(name);
  out_ += ": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::string(std::string_view s) {
  start_value();
  out_ += json_quote(s);
  return *this;
}

JsonWriter& JsonWriter::boolean(bool b) {
  start_value();
  out_ += b ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::integer(int64_t n) {
  start_value();
  out_ += std::to_string(n);
  return *this;
}

JsonWriter& JsonWriter::real(double x) {
  if (!std::isfinite(x)) return null();
  start_value();
  char text[32];
  std::snprintf(text, sizeof text, "%.6f", x);
  out_ += text;
  return *this;
}

JsonWriter& JsonWriter::null() {
  start_value();
  out_ += "null";
  return *this;
}

}  // namespace shapeprop::report
