// Writing JSON text, for reports and the tools' --json output. Writing only: nothing here parses.
//
//   JsonWriter w;
//   w.begin_object().field("rank", 3).key("rails").begin_array() ... .end_array().end_object();
//   std::string text = std::move(w).text();
//
// Commas and nesting are the writer's business; a key is expected before every value inside an object
// (a programming error otherwise, not checked at run time beyond what keeps the text well formed).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ftmpi::base {

// `text` as a JSON string literal, quotes included: control characters, '"' and '\\' escaped; bytes
// that are not valid UTF-8 become U+FFFD, so that any input gives valid JSON.
std::string json_quote(std::string_view text);

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);
  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(std::uint64_t number);
  JsonWriter& value(std::int64_t number);
  JsonWriter& value(std::uint32_t number) { return value(std::uint64_t{number}); }
  JsonWriter& value(int number) { return value(std::int64_t{number}); }
  JsonWriter& value(double number);  // non-finite numbers are written as null
  JsonWriter& value(bool flag);
  JsonWriter& null();
  // One JSON value written as it is: the caller has checked that it is valid JSON (parse_json).
  JsonWriter& raw(std::string_view json);
  template <typename T>
  JsonWriter& field(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }

  const std::string& text() const& noexcept { return out_; }
  std::string text() && noexcept { return std::move(out_); }

 private:
  void before_value();

  std::string out_;
  std::vector<bool> has_items_;  // per open object or array
  bool after_key_ = false;
};

}  // namespace ftmpi::base
