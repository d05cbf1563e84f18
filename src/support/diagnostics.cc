#include "shapeprop/diagnostics.h"

#include <algorithm>

namespace shapeprop {

const char* to_string(Severity severity) {
  switch (severity) {
    case Severity::Note: return "note";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
  }
  return "error";
}

std::string Diagnostic::str() const {
  std::string out;
  if (!file.empty()) {
    out += file;
    if (line > 0) {
      out += ':' + std::to_string(line);
      if (column > 0) out += ':' + std::to_string(column);
    }
    out += ": ";
  }
  out += to_string(severity);
  out += ": ";
  // Keep the diagnostic on one line whatever the message holds.
  for (char c : message) out += (c == '\n' || c == '\r') ? ' ' : c;
  if (!call_path.empty()) {
    out += " [at ";
    for (size_t i = 0; i < call_path.size(); ++i) {
      if (i > 0) out += " > ";
      out += call_path[i];
    }
    out += ']';
  }
  return out;
}

bool has_errors(const Diagnostics& diagnostics) {
  return std::any_of(diagnostics.begin(), diagnostics.end(),
                     [](const Diagnostic& d) { return d.severity == Severity::Error; });
}

}  // namespace shapeprop
