#include "shapeprop/diagnostics.h"

#include <algorithm>
#include <string_view>

namespace shapeprop {

const char* to_string(Severity severity) {
  switch (severity) {
    case Severity::Note: return "note";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
  }
  return "error";
}

namespace {

// Lengths beyond which a diagnostic's parts are shortened (see Diagnostic::str()).
constexpr size_t kMaxWord = 80;
constexpr size_t kMaxMessage = 600;
constexpr size_t kMaxFile = 200;
constexpr size_t kMaxPlace = 120;
constexpr size_t kPlacesFirst = 3, kPlacesLast = 4;
constexpr std::string_view kEllipsis = "...";

bool continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xc0) == 0x80; }

// `text` shortened to about `max` bytes by replacing its middle with "...", cutting only
// between UTF-8 characters.
std::string clip(std::string_view text, size_t max) {
  if (text.size() <= max) return std::string(text);
  size_t head = (max - kEllipsis.size() + 1) / 2, tail = text.size() - (max - kEllipsis.size()) / 2;
  while (head > 0 && continuation_byte(text[head])) --head;
  while (tail < text.size() && continuation_byte(text[tail])) ++tail;
  std::string out(text.substr(0, head));
  out += kEllipsis;
  out += text.substr(tail);
  return out;
}

// One line of printable text: line breaks and tabs become spaces, other control
// characters '?'; words longer than `max_word` are clipped, then the whole to `max`.
std::string clean(std::string_view text, size_t max, size_t max_word = kMaxWord) {
  std::string out;
  size_t word_start = 0;
  auto end_word = [&] {
    if (out.size() - word_start > max_word) {
      const std::string word = clip(std::string_view(out).substr(word_start), max_word);
      out.resize(word_start);
      out += word;
    }
  };
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    else if (u < 0x20 || u == 0x7f) c = '?';
    if (c == ' ') {
      end_word();
      out += c;
      word_start = out.size();
    } else {
      out += c;
    }
  }
  end_word();
  return clip(out, max);
}

}  // namespace

std::string Diagnostic::str() const {
  std::string out;
  if (!file.empty()) {
    out += clean(file, kMaxFile, kMaxFile);  // a path is one long word, often beyond kMaxWord
    if (line > 0) {
      out += ':' + std::to_string(line);
      if (column > 0) out += ':' + std::to_string(column);
    }
    out += ": ";
  }
  out += to_string(severity);
  out += ": ";
  out += clean(message, kMaxMessage);
  if (!call_path.empty()) {
    out += " [at ";
    const size_t n = call_path.size();
    const bool elide = n > kPlacesFirst + kPlacesLast + 1;
    for (size_t i = 0; i < n; ++i) {
      if (elide && i == kPlacesFirst) {
        out += " > (" + std::to_string(n - kPlacesFirst - kPlacesLast) + " more)";
        i = n - kPlacesLast - 1;
        continue;
      }
      if (i > 0) out += " > ";
      out += clean(call_path[i], kMaxPlace);
    }
    out += ']';
  }
  return out;
}

bool has_errors(const Diagnostics& diagnostics) {
  return std::any_of(diagnostics.begin(), diagnostics.end(),
                     [](const Diagnostic& d) { return d.severity == Severity::Error; });
}

std::string first_and_count(const Diagnostics& diagnostics, Severity severity) {
  const Diagnostic* first = nullptr;
  size_t others = 0;
  for (const auto& d : diagnostics) {
    if (d.severity != severity) continue;
    if (first)
      ++others;
    else
      first = &d;
  }
  if (!first) return {};
  std::string out = first->str();
  if (others > 0)
    out += " (and " + std::to_string(others) + " more " + to_string(severity) + (others == 1 ? ")" : "s)");
  return out;
}

}  // namespace shapeprop
