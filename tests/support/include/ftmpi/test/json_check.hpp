// A strict JSON well-formedness check for tests (RFC 8259 grammar; numbers, strings with escapes,
// nesting), so that a test can assert that what a writer produced parses, without a JSON library.
#pragma once

#include <cctype>
#include <cstddef>
#include <string_view>

namespace ftmpi::test {

class JsonCheck {
 public:
  // True when `text` is exactly one JSON value, with optional surrounding white space.
  static bool valid(std::string_view text) {
    JsonCheck c(text);
    c.space();
    if (!c.value(0)) return false;
    c.space();
    return c.at_ == text.size();
  }

 private:
  explicit JsonCheck(std::string_view text) : s_(text) {}
  bool more() const { return at_ < s_.size(); }
  char peek() const { return more() ? s_[at_] : '\0'; }
  bool eat(char c) {
    if (peek() != c) return false;
    ++at_;
    return true;
  }
  bool word(std::string_view w) {
    if (s_.substr(at_, w.size()) != w) return false;
    at_ += w.size();
    return true;
  }
  void space() {
    while (more() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++at_;
  }
  bool digits() {
    const std::size_t start = at_;
    while (more() && std::isdigit(static_cast<unsigned char>(peek())) != 0) ++at_;
    return at_ > start;
  }
  bool number() {
    eat('-');
    if (eat('0')) {
    } else if (!digits()) {
      return false;
    }
    if (eat('.') && !digits()) return false;
    if (peek() == 'e' || peek() == 'E') {
      ++at_;
      if (!eat('+')) eat('-');
      if (!digits()) return false;
    }
    return true;
  }
  bool string() {
    if (!eat('"')) return false;
    while (more()) {
      const unsigned char c = static_cast<unsigned char>(s_[at_++]);
      if (c == '"') return true;
      if (c < 0x20) return false;
      if (c != '\\') continue;
      const char e = peek();
      ++at_;
      if (e == 'u') {
        for (int i = 0; i < 4; ++i, ++at_) {
          if (std::isxdigit(static_cast<unsigned char>(peek())) == 0) return false;
        }
      } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
        return false;
      }
    }
    return false;
  }
  bool value(int depth) {
    if (depth > 64) return false;
    const char c = peek();
    if (c == '{') return members(depth, '}', true);
    if (c == '[') return members(depth, ']', false);
    if (c == '"') return string();
    if (c == 't') return word("true");
    if (c == 'f') return word("false");
    if (c == 'n') return word("null");
    return number();
  }
  bool members(int depth, char close, bool object) {
    ++at_;
    space();
    if (eat(close)) return true;
    while (true) {
      if (object) {
        if (!string()) return false;
        space();
        if (!eat(':')) return false;
        space();
      }
      if (!value(depth + 1)) return false;
      space();
      if (eat(close)) return true;
      if (!eat(',')) return false;
      space();
    }
  }

  std::string_view s_;
  std::size_t at_ = 0;
};

}  // namespace ftmpi::test
