#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "ftmpi/base/json.hpp"
#include "ftmpi/test/json_check.hpp"
#include "ftmpi/test/seed.hpp"

using namespace ftmpi::base;
using ftmpi::test::JsonCheck;

BOOST_AUTO_TEST_SUITE(json)

BOOST_AUTO_TEST_CASE(quoting_escapes_what_json_requires) {
  BOOST_TEST(json_quote("plain") == "\"plain\"");
  BOOST_TEST(json_quote("a\"b\\c") == "\"a\\\"b\\\\c\"");
  BOOST_TEST(json_quote("line\nnext\ttab\r") == "\"line\\nnext\\ttab\\r\"");
  BOOST_TEST(json_quote(std::string("\x01\x1f\x7f", 3)) == "\"\\u0001\\u001f\\u007f\"");
  BOOST_TEST(json_quote("rail \xc3\xa9th1") == "\"rail \xc3\xa9th1\"");  // valid UTF-8 kept
  BOOST_TEST(json_quote("bad \xff byte") == "\"bad \xef\xbf\xbd byte\"");  // invalid: U+FFFD
  BOOST_TEST(json_quote("\xed\xa0\x80") == "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");  // a surrogate
}

BOOST_AUTO_TEST_CASE(the_writer_places_commas_and_nesting) {
  JsonWriter w;
  w.begin_object().field("job", "abc").field("ranks", 2).key("rails").begin_array();
  w.begin_object().field("index", 0).field("up", true).end_object();
  w.begin_object().field("index", std::uint64_t{1}).field("rtt", 1.5).key("none").null().end_object();
  w.end_array().key("empty").begin_array().end_array().key("nested").begin_object().end_object().end_object();
  BOOST_TEST(w.text() ==
             R"({"job":"abc","ranks":2,"rails":[{"index":0,"up":true},{"index":1,"rtt":1.5,"none":null}],)"
             R"("empty":[],"nested":{}})");
  BOOST_TEST(JsonCheck::valid(w.text()));
}

BOOST_AUTO_TEST_CASE(numbers_are_exact_and_non_finite_ones_are_null) {
  JsonWriter w;
  w.begin_array()
      .value(std::numeric_limits<std::uint64_t>::max())
      .value(std::int64_t{-5})
      .value(std::nan(""))
      .value(std::numeric_limits<double>::infinity())
      .value(0.1)
      .end_array();
  BOOST_TEST(w.text() == "[18446744073709551615,-5,null,null,0.1]");
  BOOST_TEST(JsonCheck::valid(w.text()));
}

BOOST_AUTO_TEST_CASE(any_bytes_as_keys_and_values_give_valid_json) {
  const std::uint64_t seed = ftmpi::test::seed_for("json any bytes");
  BOOST_TEST_CONTEXT("seed " << seed) {
    std::mt19937_64 random(seed);
    for (int i = 0; i < 2000; ++i) {
      std::string bytes(random() % 24, '\0');
      for (char& c : bytes) c = static_cast<char>(random());
      JsonWriter w;
      w.begin_object().field(bytes, bytes).key("list").begin_array().value(bytes).end_array().end_object();
      BOOST_TEST_REQUIRE(JsonCheck::valid(w.text()), w.text());
    }
  }
}

BOOST_AUTO_TEST_CASE(the_checker_refuses_what_is_not_json) {
  for (const char* bad : {"", "{", "[1,]", "{\"a\"}", "{\"a\":1,}", "01", "1.", "\"\x01\"", "\"\\x\"", "tru",
                          "[1] [2]", "{'a':1}", "-", "1e"}) {
    BOOST_TEST(!JsonCheck::valid(bad), bad);
  }
  for (const char* good : {"0", "-1.5e+3", "\"\\u00e9\"", " [ {\"a\" : [ ] } ] ", "null"}) {
    BOOST_TEST(JsonCheck::valid(good), good);
  }
}

BOOST_AUTO_TEST_SUITE_END()
