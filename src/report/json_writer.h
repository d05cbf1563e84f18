// A small JSON writer for the report: two-space indentation, keys in the order written,
// strings escaped as JSON needs and made valid UTF-8 (a model's names are bytes; what is
// not UTF-8 becomes U+FFFD), numbers that are always finite.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shapeprop::report {

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& begin_array();
  JsonWriter& end();  // closes the innermost object or array
  JsonWriter& key(std::string_view name);

  JsonWriter& string(std::string_view s);
  JsonWriter& boolean(bool b);
  JsonWriter& integer(int64_t n);
  JsonWriter& count(size_t n) { return integer(static_cast<int64_t>(n)); }
  JsonWriter& real(double x);  // not finite: null
  JsonWriter& null();

  // A key and its value, the common case.
  template <class F>
  JsonWriter& field(std::string_view name, F&& write_value) {
    key(name);
    write_value(*this);
    return *this;
  }

  // The text written so far (complete once every object and array is closed).
  const std::string& text() const { return out_; }

 private:
  struct Level {
    bool array = false;
    bool empty = true;
  };
  std::string out_;
  std::vector<Level> open_;
  bool after_key_ = false;

  void start_value();
  void newline();
};

// `s` as a JSON string literal, quotes included.
std::string json_quote(std::string_view s);

}  // namespace shapeprop::report
