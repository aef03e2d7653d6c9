// Writing SVG 1.1 by hand, for the pictures the tools draw (ftinject's timelines, ftbench's curves): text
// escaped so that no input makes the document unreadable, numbers that are never "nan" or "inf", and the
// few elements they use.
#pragma once

#include <string>
#include <string_view>

namespace ftmpi::base::svg {

// Text for XML content or an attribute: markup escaped, and what XML 1.0 forbids (control characters,
// invalid UTF-8) replaced.
std::string escape(std::string_view text);
// `value` with `decimals` decimals; a value that is not finite is written 0.
std::string number(double value, int decimals = 1);

// Elements appended to `out`; `attributes` and `inner` are markup already (escaped where they hold text).
void line(std::string& out, double x1, double y1, double x2, double y2, std::string_view attributes,
          std::string_view inner = {});
void rect(std::string& out, double x, double y, double width, double height, std::string_view attributes,
          std::string_view inner = {});
void circle(std::string& out, double x, double y, const char* fill, std::string_view inner = {}, double radius = 4);
void text(std::string& out, double x, double y, std::string_view attributes, std::string_view escaped);

}  // namespace ftmpi::base::svg
