// Tests of the pictures the tools draw: an SVG must render with a real renderer. rsvg-convert (librsvg,
// what GNOME's viewers use) draws it to a PNG; a document it cannot read fails. Never skipped: without
// the renderer the test fails and says what to install.
#pragma once

#include <stdlib.h>  // mkdtemp

#include <boost/test/unit_test.hpp>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace ftmpi::test {

inline void require_svg_renders(const std::string& svg) {
  BOOST_TEST_INFO("the SVG:\n" << svg);
  std::string lowered = svg;
  for (char& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  BOOST_TEST(lowered.find("nan") == std::string::npos, "a number is nan");
  BOOST_TEST(lowered.find("inf") == std::string::npos, "a number is inf");
  BOOST_TEST(svg.find("xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos);
  BOOST_TEST(svg.find("viewBox=") != std::string::npos);
  if (std::system("command -v rsvg-convert >/dev/null 2>&1") != 0) {
    BOOST_FAIL("rsvg-convert is not on PATH: install librsvg2-bin (scripts/install-deps.sh does)");
  }
  char dir[] = "/tmp/ftmpi-svg-XXXXXX";
  BOOST_TEST_REQUIRE(::mkdtemp(dir) != nullptr);
  const std::string in = std::string(dir) + "/picture.svg", out = std::string(dir) + "/picture.png",
                    err = std::string(dir) + "/stderr";
  std::ofstream(in, std::ios::binary) << svg;
  const int rc = std::system(("rsvg-convert -o '" + out + "' '" + in + "' 2>'" + err + "'").c_str());
  const auto read = [](const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  };
  const std::string png = read(out), why = read(err);
  std::filesystem::remove_all(dir);
  BOOST_TEST_REQUIRE(rc == 0, "rsvg-convert failed (" << rc << "): " << why);
  BOOST_TEST(png.size() > 8);
  BOOST_TEST(png.substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
}

}  // namespace ftmpi::test
