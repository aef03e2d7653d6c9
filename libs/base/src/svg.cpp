// SVG written by hand (svg.hpp).
#include "ftmpi/base/svg.hpp"

#include <cmath>
#include <cstdio>

namespace ftmpi::base::svg {

namespace {

// The length of the valid UTF-8 sequence `s` starts with (RFC 3629, and a character XML allows), or 0.
std::size_t utf8_length(std::string_view s) {
  const auto byte = [&](std::size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0U; };
  const unsigned lead = byte(0);
  std::size_t n = 0;
  unsigned low = 0x80, high = 0xBF;  // the second byte's range: narrower where overlongs or surrogates hide
  if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3;
    low = lead == 0xE0 ? 0xA0 : low;
    high = lead == 0xED ? 0x9F : high;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4;
    low = lead == 0xF0 ? 0x90 : low;
    high = lead == 0xF4 ? 0x8F : high;
  } else {
    return 0;
  }
  if (byte(1) < low || byte(1) > high) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if (byte(k) < 0x80 || byte(k) > 0xBF) return 0;
  }
  if (lead == 0xEF && byte(1) == 0xBF && byte(2) >= 0xBE) return 0;  // U+FFFE, U+FFFF: not XML characters
  return n;
}

}  // namespace

std::string escape(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (static_cast<unsigned char>(c) < 0x80) {
      switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&apos;"; break;
        default: out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
      }
      ++i;
    } else if (const std::size_t n = utf8_length(text.substr(i)); n > 0) {
      out += text.substr(i, n);
      i += n;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

std::string number(double value, int decimals) {
  if (!std::isfinite(value)) value = 0;  // never "nan" or "inf" in a picture
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

void line(std::string& o, double x1, double y1, double x2, double y2, std::string_view attributes,
          std::string_view inner) {
  o += "<line x1=\"" + number(x1) + "\" y1=\"" + number(y1) + "\" x2=\"" + number(x2) + "\" y2=\"" + number(y2) + "\" ";
  o += std::string(attributes) + (inner.empty() ? "/>\n" : ">" + std::string(inner) + "</line>\n");
}
void rect(std::string& o, double x, double y, double width, double height, std::string_view attributes,
          std::string_view inner) {
  o += "<rect x=\"" + number(x) + "\" y=\"" + number(y) + "\" width=\"" + number(width) + "\" height=\"" + number(height) + "\" ";
  o += std::string(attributes) + (inner.empty() ? "/>\n" : ">" + std::string(inner) + "</rect>\n");
}
void circle(std::string& o, double x, double y, const char* fill, std::string_view inner, double radius) {
  o += "<circle cx=\"" + number(x) + "\" cy=\"" + number(y) + "\" r=\"" + number(radius) + "\" fill=\"" + fill +
       "\" stroke=\"#ffffff\"";
  o += inner.empty() ? "/>\n" : ">" + std::string(inner) + "</circle>\n";
}
void text(std::string& o, double x, double y, std::string_view attributes, std::string_view escaped) {
  o += "<text x=\"" + number(x) + "\" y=\"" + number(y) + "\" " + std::string(attributes) + ">" + std::string(escaped) +
       "</text>\n";
}

}  // namespace ftmpi::base::svg
