// JsonValue and parse_json (json_value.hpp).
#include "ftmpi/base/json_value.hpp"

#include "utf8.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

namespace ftmpi::base {
namespace {

using detail::utf8_length;

// `code_point` (at most U+10FFFF, not a surrogate) as UTF-8.
void append_utf8(std::string& out, std::uint32_t code_point) {
  const auto byte = [&](std::uint32_t bits) { out += static_cast<char>(bits); };
  if (code_point < 0x80) {
    byte(code_point);
  } else if (code_point < 0x800) {
    byte(0xC0 | (code_point >> 6));
    byte(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    byte(0xE0 | (code_point >> 12));
    byte(0x80 | ((code_point >> 6) & 0x3F));
    byte(0x80 | (code_point & 0x3F));
  } else {
    byte(0xF0 | (code_point >> 18));
    byte(0x80 | ((code_point >> 12) & 0x3F));
    byte(0x80 | ((code_point >> 6) & 0x3F));
    byte(0x80 | (code_point & 0x3F));
  }
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// 2^53: up to here every whole double is the integer it looks like. Beyond it, a number that was not an
// integer literal (1e300, 9007199254740993.0) has no integer value worth trusting.
constexpr double kWholeDoubleLimit = 9007199254740992.0;

const JsonValue& null_value() noexcept {
  static const JsonValue null{};
  return null;
}

// Recursive descent over `text_`. Every read is guarded by more() or a length check, and recursion goes one
// level per open array or object, refused beyond kJsonMaxDepth, so hostile input can neither read out of
// bounds nor exhaust the stack. On failure error_ says what and where; the partial value is dropped.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<JsonValue> document() {
    JsonValue root;
    bool ok = parse_value(root, 0);
    if (ok) {
      skip_space();
      if (more()) ok = fail("unexpected text after the value", at_);
    }
    if (!ok) return Result<JsonValue>(Errc::invalid_argument, std::move(error_));
    return Result<JsonValue>(std::move(root));
  }

 private:
  bool more() const { return at_ < text_.size(); }
  char peek() const { return text_[at_]; }  // only when more()
  bool eat(char c) {
    if (!more() || peek() != c) return false;
    ++at_;
    return true;
  }
  void skip_space() {
    while (more() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++at_;
  }
  bool digits() {
    const std::size_t first = at_;
    while (more() && is_digit(peek())) ++at_;
    return at_ > first;
  }

  bool fail(const std::string& what, std::size_t offset) {
    error_ = "JSON: " + what + " at offset " + std::to_string(offset);
    return false;
  }
  bool expected(std::string_view what) {
    fail("expected " + std::string(what), at_);
    if (!more()) error_ += " (end of input)";
    return false;
  }
  // `depth` arrays and objects enclose the one starting at at_.
  bool enter(int depth) {
    if (depth >= kJsonMaxDepth) return fail("nesting deeper than " + std::to_string(kJsonMaxDepth), at_);
    return true;
  }

  bool parse_value(JsonValue& out, int depth) {
    skip_space();
    if (!more()) return expected("a value");
    switch (peek()) {
      case '{':
        return parse_object(out, depth);
      case '[':
        return parse_array(out, depth);
      case '"': {
        std::string text;
        if (!parse_string(text)) return false;
        out = JsonValue::string(std::move(text));
        return true;
      }
      case 't':
        return parse_literal("true", JsonValue::boolean(true), out);
      case 'f':
        return parse_literal("false", JsonValue::boolean(false), out);
      case 'n':
        return parse_literal("null", JsonValue(), out);
      default:
        break;
    }
    if (peek() == '-' || is_digit(peek())) return parse_number(out);
    return expected("a value");
  }

  bool parse_literal(std::string_view word, JsonValue literal, JsonValue& out) {
    if (text_.substr(at_, word.size()) != word) return fail("invalid literal", at_);
    at_ += word.size();
    out = std::move(literal);
    return true;
  }

  bool parse_object(JsonValue& out, int depth) {
    if (!enter(depth)) return false;
    ++at_;  // '{'
    JsonValue::Members fields;
    skip_space();
    if (!eat('}')) {
      while (true) {
        skip_space();
        if (!more() || peek() != '"') return expected("a member name");
        std::string name;
        if (!parse_string(name)) return false;
        skip_space();
        if (!eat(':')) return expected("':'");
        JsonValue member;
        if (!parse_value(member, depth + 1)) return false;
        fields.emplace_back(std::move(name), std::move(member));
        skip_space();
        if (eat('}')) break;
        if (!eat(',')) return expected("',' or '}'");
      }
    }
    out = JsonValue::object(std::move(fields));
    return true;
  }

  bool parse_array(JsonValue& out, int depth) {
    if (!enter(depth)) return false;
    ++at_;  // '['
    std::vector<JsonValue> values;
    skip_space();
    if (!eat(']')) {
      while (true) {
        JsonValue item;
        if (!parse_value(item, depth + 1)) return false;
        values.push_back(std::move(item));
        skip_space();
        if (eat(']')) break;
        if (!eat(',')) return expected("',' or ']'");
      }
    }
    out = JsonValue::array(std::move(values));
    return true;
  }

  // RFC 8259 number grammar checked here; std::from_chars then gives the double. Integer literals also keep
  // their exact value when it fits: 0..2^64-1, or -2^63..-1.
  bool parse_number(JsonValue& out) {
    const std::size_t start = at_;
    const bool negative = eat('-');
    if (!more() || !is_digit(peek())) return expected("a digit");
    constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
    std::uint64_t magnitude = 0;
    bool fits = true;
    if (peek() == '0') {
      ++at_;
      if (more() && is_digit(peek())) return fail("leading zero in number", start);
    } else {
      while (more() && is_digit(peek())) {
        const auto digit = static_cast<std::uint64_t>(peek() - '0');
        if (fits && magnitude <= (kMax - digit) / 10) {
          magnitude = magnitude * 10 + digit;
        } else {
          fits = false;
        }
        ++at_;
      }
    }
    bool integer = true;
    if (eat('.')) {
      integer = false;
      if (!digits()) return expected("a digit");
    }
    const std::string_view significand = text_.substr(start, at_ - start);
    if (more() && (peek() == 'e' || peek() == 'E')) {
      ++at_;
      integer = false;
      if (!eat('+')) eat('-');
      if (!digits()) return expected("a digit");
    }
    const char* const last = text_.data() + at_;
    double parsed = 0;
    const auto [end, ec] = std::from_chars(text_.data() + start, last, parsed);
    if (ec != std::errc() && ec != std::errc::result_out_of_range) return fail("invalid number", start);
    // Out of range: overflow to infinity, or a non-zero literal that rounds to zero. Checked here as well
    // as by from_chars, whose reporting of these has varied between library versions.
    const bool rounds_to_zero = parsed == 0 && significand.find_first_of("123456789") != std::string_view::npos;
    if (ec == std::errc::result_out_of_range || !std::isfinite(parsed) || rounds_to_zero) {
      return fail("number out of range", start);
    }
    if (end != last) return fail("invalid number", start);  // the grammar above makes this unexpected
    constexpr std::uint64_t kInt64MinMagnitude = std::uint64_t{1} << 63;
    if (integer && fits && !negative) {
      out = JsonValue::number(magnitude);
    } else if (integer && fits && magnitude != 0 && magnitude <= kInt64MinMagnitude) {
      // Negation modulo 2^64, then the two's complement conversion: exact down to -2^63.
      out = JsonValue::number(static_cast<std::int64_t>(std::uint64_t{0} - magnitude));
    } else {
      out = JsonValue::number(parsed);  // "-0" included: its sign survives as the double -0.0
    }
    return true;
  }

  // At the opening quote.
  bool parse_string(std::string& out) {
    const std::size_t opening = at_;
    ++at_;
    while (more()) {
      const auto c = static_cast<unsigned char>(peek());
      if (c == '"') {
        ++at_;
        return true;
      }
      if (c == '\\') {
        if (!parse_escape(out, opening)) return false;
        continue;
      }
      if (c < 0x20) return fail("control character in string", at_);
      const std::size_t n = utf8_length(text_.substr(at_));
      if (n == 0) return fail("invalid UTF-8 in string", at_);
      out.append(text_.substr(at_, n));
      at_ += n;
    }
    return fail("unterminated string", opening);
  }

  // At a backslash inside the string that opened at `opening`.
  bool parse_escape(std::string& out, std::size_t opening) {
    const std::size_t backslash = at_;
    if (text_.size() - at_ < 2) return fail("unterminated string", opening);
    const char kind = text_[at_ + 1];
    at_ += 2;
    switch (kind) {
      case '"':
        out += '"';
        return true;
      case '\\':
        out += '\\';
        return true;
      case '/':
        out += '/';
        return true;
      case 'b':
        out += '\b';
        return true;
      case 'f':
        out += '\f';
        return true;
      case 'n':
        out += '\n';
        return true;
      case 'r':
        out += '\r';
        return true;
      case 't':
        out += '\t';
        return true;
      case 'u':
        break;
      default:
        return fail("invalid escape", backslash);
    }
    std::uint32_t unit = 0;
    if (!hex4(unit)) return fail("invalid \\u escape", backslash);
    if (unit >= 0xDC00 && unit <= 0xDFFF) return fail("unpaired surrogate in \\u escape", backslash);
    if (unit >= 0xD800 && unit <= 0xDBFF) {
      // A high surrogate: only a low one, escaped too, completes it.
      const std::size_t second = at_;
      if (text_.substr(at_, 2) != "\\u") return fail("unpaired surrogate in \\u escape", backslash);
      at_ += 2;
      std::uint32_t low = 0;
      if (!hex4(low)) return fail("invalid \\u escape", second);
      if (low < 0xDC00 || low > 0xDFFF) return fail("unpaired surrogate in \\u escape", backslash);
      unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
    }
    append_utf8(out, unit);
    return true;
  }

  // Four hex digits at at_, consumed on success.
  bool hex4(std::uint32_t& out) {
    if (text_.size() - at_ < 4) return false;
    std::uint32_t result = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      const char c = text_[at_ + i];
      std::uint32_t digit = 0;
      if (c >= '0' && c <= '9') {
        digit = static_cast<std::uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        digit = static_cast<std::uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        digit = static_cast<std::uint32_t>(c - 'A' + 10);
      } else {
        return false;
      }
      result = (result << 4) | digit;
    }
    at_ += 4;
    out = result;
    return true;
  }

  std::string_view text_;
  std::size_t at_ = 0;  // never beyond text_.size()
  std::string error_;
};

}  // namespace

JsonValue JsonValue::boolean(bool flag) {
  JsonValue v;
  v.kind_ = Kind::boolean;
  v.flag_ = flag;
  return v;
}

JsonValue JsonValue::number(double value) {
  JsonValue v;
  v.kind_ = Kind::number;
  v.number_ = value;
  return v;
}

JsonValue JsonValue::number(std::uint64_t value) {
  JsonValue v = number(static_cast<double>(value));
  v.exact_ = true;
  v.magnitude_ = value;
  return v;
}

JsonValue JsonValue::number(std::int64_t value) {
  JsonValue v = number(static_cast<double>(value));
  v.exact_ = true;
  v.negative_ = value < 0;
  // Modulo 2^64, so that -2^63 has a magnitude too.
  v.magnitude_ = value < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(value) : static_cast<std::uint64_t>(value);
  return v;
}

JsonValue JsonValue::string(std::string text) {
  JsonValue v;
  v.kind_ = Kind::string;
  v.string_ = std::move(text);
  return v;
}

JsonValue JsonValue::array(std::vector<JsonValue> values) {
  JsonValue v;
  v.kind_ = Kind::array;
  v.items_ = std::move(values);
  return v;
}

JsonValue JsonValue::object(Members fields) {
  JsonValue v;
  v.kind_ = Kind::object;
  v.members_ = std::move(fields);
  return v;
}

std::uint64_t JsonValue::as_u64() const noexcept {
  if (kind_ != Kind::number) return 0;
  if (exact_) return negative_ ? std::uint64_t{0} : magnitude_;
  if (number_ >= 0 && number_ <= kWholeDoubleLimit && std::trunc(number_) == number_) {
    return static_cast<std::uint64_t>(number_);
  }
  return 0;
}

std::int64_t JsonValue::as_i64() const noexcept {
  if (kind_ != Kind::number) return 0;
  constexpr std::uint64_t kMaxMagnitude = std::numeric_limits<std::int64_t>::max();
  if (exact_ && !negative_) return magnitude_ <= kMaxMagnitude ? static_cast<std::int64_t>(magnitude_) : 0;
  if (exact_) {
    // Negation modulo 2^64, then the two's complement conversion: exact down to -2^63.
    return magnitude_ <= kMaxMagnitude + 1 ? static_cast<std::int64_t>(std::uint64_t{0} - magnitude_) : 0;
  }
  if (std::fabs(number_) <= kWholeDoubleLimit && std::trunc(number_) == number_) {
    return static_cast<std::int64_t>(number_);
  }
  return 0;
}

const JsonValue* JsonValue::find(std::string_view key) const noexcept {
  for (const auto& [name, member] : members_) {
    if (name == key) return &member;
  }
  return nullptr;
}

const JsonValue& JsonValue::operator[](std::string_view key) const noexcept {
  const JsonValue* member = find(key);
  return member != nullptr ? *member : null_value();
}

const JsonValue& JsonValue::operator[](std::size_t index) const noexcept {
  return index < items_.size() ? items_[index] : null_value();
}

bool operator==(const JsonValue& a, const JsonValue& b) noexcept {
  using Kind = JsonValue::Kind;
  if (a.kind_ != b.kind_) return false;
  switch (a.kind_) {
    case Kind::null:
      return true;
    case Kind::boolean:
      return a.flag_ == b.flag_;
    case Kind::number:
      if (a.exact_ && b.exact_) return a.negative_ == b.negative_ && a.magnitude_ == b.magnitude_;
      return a.number_ == b.number_;
    case Kind::string:
      return a.string_ == b.string_;
    case Kind::array:
      return a.items_ == b.items_;
    case Kind::object:
      return a.members_ == b.members_;
  }
  return false;
}

Result<JsonValue> parse_json(std::string_view text) { return Parser(text).document(); }

void write_json(JsonWriter& out, const JsonValue& value) {
  using Kind = JsonValue::Kind;
  switch (value.kind()) {
    case Kind::null:
      out.null();
      return;
    case Kind::boolean:
      out.value(value.as_bool());
      return;
    case Kind::number:
      if (!value.is_exact_integer()) {
        out.value(value.as_number());
      } else if (value.as_number() < 0) {
        out.value(value.as_i64());
      } else {
        out.value(value.as_u64());
      }
      return;
    case Kind::string:
      out.value(value.as_string());
      return;
    case Kind::array:
      out.begin_array();
      for (const JsonValue& item : value.items()) write_json(out, item);
      out.end_array();
      return;
    case Kind::object:
      out.begin_object();
      for (const auto& [name, member] : value.members()) {
        out.key(name);
        write_json(out, member);
      }
      out.end_object();
      return;
  }
}

std::string to_json(const JsonValue& value) {
  JsonWriter writer;
  write_json(writer, value);
  return std::move(writer).text();
}

}  // namespace ftmpi::base
