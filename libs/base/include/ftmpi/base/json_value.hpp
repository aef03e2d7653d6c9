// Reading JSON text: a strict RFC 8259 parser into a small document tree (DOM), beside the writer in
// json.hpp. For tools and tests that read reports back, not for the data path.
//
//   auto doc = parse_json(text);
//   if (!doc) return doc.status();       // "JSON: expected ',' or '}' at offset 17"
//   std::uint64_t rank = (*doc)["rank"].as_u64();
//   for (const JsonValue& rail : (*doc)["rails"].items()) ...
//
// Accessors never fail: asking a value for the wrong kind gives the empty answer (false, 0, "", no items),
// and a missing key or index gives a null, so that a chain like v["a"]["b"][2] is safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ftmpi/base/json.hpp"
#include "ftmpi/base/status.hpp"

namespace ftmpi::base {

class JsonValue {
 public:
  enum class Kind : std::uint8_t { null, boolean, number, string, array, object };
  using Members = std::vector<std::pair<std::string, JsonValue>>;

  JsonValue() noexcept = default;  // null
  static JsonValue boolean(bool flag);
  static JsonValue number(double value);
  static JsonValue number(std::uint64_t value);  // held exactly, as well as a double
  static JsonValue number(std::int64_t value);   // held exactly, as well as a double
  static JsonValue number(std::uint32_t value) { return JsonValue::number(std::uint64_t{value}); }
  static JsonValue number(int value) { return JsonValue::number(std::int64_t{value}); }
  static JsonValue string(std::string text);
  static JsonValue array(std::vector<JsonValue> values);
  static JsonValue object(Members fields);

  Kind kind() const noexcept { return kind_; }
  bool is_null() const noexcept { return kind_ == Kind::null; }
  bool is_bool() const noexcept { return kind_ == Kind::boolean; }
  bool is_number() const noexcept { return kind_ == Kind::number; }
  bool is_string() const noexcept { return kind_ == Kind::string; }
  bool is_array() const noexcept { return kind_ == Kind::array; }
  bool is_object() const noexcept { return kind_ == Kind::object; }
  // An integer held exactly: an integer literal (no fraction, no exponent) in -2^63..2^64-1, or a value made
  // by number(integer). Its as_u64() or as_i64() is then the literal itself, not the rounded double.
  bool is_exact_integer() const noexcept { return kind_ == Kind::number && exact_; }

  bool as_bool() const noexcept { return kind_ == Kind::boolean && flag_; }  // false if not a boolean
  double as_number() const noexcept { return number_; }                     // 0 if not a number
  // The integer: exact for integer literals that fit (0..2^64-1 for as_u64, -2^63..2^63-1 for as_i64); for
  // a number written otherwise (1e3, 2.0), its double when that is whole and at most 2^53 in magnitude.
  // 0 in every other case: not a number, not whole, out of range (as_u64() of -1 is 0).
  std::uint64_t as_u64() const noexcept;
  std::int64_t as_i64() const noexcept;
  const std::string& as_string() const noexcept { return string_; }         // empty if not a string
  const std::vector<JsonValue>& items() const noexcept { return items_; }   // empty if not an array
  const Members& members() const noexcept { return members_; }  // in input order; empty if not an object

  // The first member named `key` (JSON allows repeated names; all are kept in members()), or nullptr.
  const JsonValue* find(std::string_view key) const noexcept;
  // find(key), or a null value when there is none (or this is not an object).
  const JsonValue& operator[](std::string_view key) const noexcept;
  // items()[index], or a null value when out of range (or this is not an array).
  const JsonValue& operator[](std::size_t index) const noexcept;

  // Same content: kind, members in order, items, strings byte for byte. Numbers compare exactly when both
  // are exact integers and as doubles otherwise, so 1e2 equals 100 and -0 equals 0.
  friend bool operator==(const JsonValue& a, const JsonValue& b) noexcept;

 private:
  Kind kind_ = Kind::null;
  bool flag_ = false;
  // Numbers: number_ always; when exact_, also the integer as sign and magnitude (zero is never negative).
  bool exact_ = false;
  bool negative_ = false;
  std::uint64_t magnitude_ = 0;
  double number_ = 0;
  std::string string_;
  std::vector<JsonValue> items_;
  Members members_;
};

// Exactly one JSON value with optional white space around it. Errors (Errc::invalid_argument) say what and
// at which byte offset. Refused beyond RFC 8259's grammar: nesting deeper than kJsonMaxDepth, numbers
// whose magnitude overflows a double or underflows to zero (RFC 8259 section 9 lets a parser limit range),
// invalid UTF-8 and unpaired surrogates in strings. Object names may repeat; members() keeps them all.
inline constexpr int kJsonMaxDepth = 128;
Result<JsonValue> parse_json(std::string_view text);

// `value` as JSON text through JsonWriter: exact integers as integers, other numbers as the shortest text
// that reads back as the same double (non-finite ones as null, as JsonWriter does).
void write_json(JsonWriter& out, const JsonValue& value);
std::string to_json(const JsonValue& value);

}  // namespace ftmpi::base
