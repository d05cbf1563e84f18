// Diagnostics: how errors and warnings cross the library boundary.
//
// shapeprop never lets ONNX's exceptions escape; every failure becomes a Diagnostic that
// names where it arose: the file (and line and column for text input) or the call path
// (graph -> call node -> function -> node -> value) inside the model.
#pragma once

#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace shapeprop {

enum class Severity { Note, Warning, Error };

const char* to_string(Severity severity);

struct Diagnostic {
  Severity severity = Severity::Error;
  std::string message;
  std::string file;                    // empty when the problem is not tied to a file
  int line = 0;                        // 1-based; 0 when unknown (binary input)
  int column = 0;                      // 1-based; 0 when unknown
  std::vector<std::string> call_path;  // outermost first, e.g. {"graph main", "node n3 (aten_t)", ...}

  static Diagnostic error(std::string message) { return make(Severity::Error, std::move(message)); }
  static Diagnostic warning(std::string message) { return make(Severity::Warning, std::move(message)); }
  static Diagnostic make(Severity severity, std::string message) {
    Diagnostic d;
    d.severity = severity;
    d.message = std::move(message);
    return d;
  }

  Diagnostic& in_file(std::string path, int line_no = 0, int column_no = 0) & {
    file = std::move(path), line = line_no, column = column_no;
    return *this;
  }
  Diagnostic&& in_file(std::string path, int line_no = 0, int column_no = 0) && {
    return std::move(in_file(std::move(path), line_no, column_no));
  }

  // One line, compiler style: "file:line:col: error: message [at a > b > c]". Clipped to
  // a readable length whatever the model holds: a word (a name) longer than 80 bytes
  // keeps its start and end around "...", as do the message beyond 600 bytes, each
  // place beyond 120 and the file's path beyond 200; a call path of more than 8 places keeps its
  // first 3 and last 4. Control characters become spaces or '?'.
  std::string str() const;
};

using Diagnostics = std::vector<Diagnostic>;

bool has_errors(const Diagnostics& diagnostics);

// The first diagnostic of `severity` as one line (str()), followed by a count of the
// others of that severity: "... (and 3 more errors)". Empty when there is none.
std::string first_and_count(const Diagnostics& diagnostics, Severity severity = Severity::Error);

// A value or the Diagnostic that explains why there is none.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}                // NOLINT(google-explicit-constructor)
  Result(Diagnostic error) : state_(std::move(error)) {}       // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Diagnostic& error() const { return std::get<Diagnostic>(state_); }

 private:
  std::variant<T, Diagnostic> state_;
};

// Result of an operation that yields nothing but may fail.
struct Ok {};
using Status = Result<Ok>;

}  // namespace shapeprop
