#include <boost/test/unit_test.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/base/json.hpp"
#include "ftmpi/base/json_value.hpp"
#include "ftmpi/test/seed.hpp"

using namespace ftmpi::base;

namespace {

// `text` parsed, or a failed test.
JsonValue parsed(std::string_view text) {
  auto result = parse_json(text);
  BOOST_TEST_REQUIRE(result.is_ok(), std::string(text) << ": " << result.status().message());
  return std::move(result).value();
}

// The message of the error that `text` gives, or "(parsed)".
std::string error_of(std::string_view text) {
  const auto result = parse_json(text);
  if (result.is_ok()) return "(parsed)";
  BOOST_TEST((result.code() == Errc::invalid_argument), result.status().to_string());
  return result.status().message();
}

std::string utf8(std::uint32_t code_point) {
  std::string out;
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
  return out;
}

// Valid UTF-8 of every length, control characters included: what the writer keeps as it is.
std::string random_text(std::mt19937_64& random) {
  std::string out;
  const std::uint64_t length = random() % 12;
  for (std::uint64_t i = 0; i < length; ++i) {
    std::uint32_t code_point = 0;
    switch (random() % 4) {
      case 0:
        code_point = static_cast<std::uint32_t>(random() % 0x80);
        break;
      case 1:
        code_point = static_cast<std::uint32_t>(0x80 + random() % (0x800 - 0x80));
        break;
      case 2:
        code_point = static_cast<std::uint32_t>(0x800 + random() % (0x10000 - 0x800));
        if (code_point >= 0xD800 && code_point <= 0xDFFF) code_point -= 0x800;  // no surrogates
        break;
      default:
        code_point = static_cast<std::uint32_t>(0x10000 + random() % (0x110000 - 0x10000));
        break;
    }
    out += utf8(code_point);
  }
  return out;
}

double random_double(std::mt19937_64& random) {
  if (random() % 2 == 0) return static_cast<double>(static_cast<std::int64_t>(random() % 2001) - 1000) / 8;
  double number = 0;
  do {
    number = std::bit_cast<double>(random());
  } while (!std::isfinite(number));
  return number;
}

// A random value, written to `out` and returned as what parsing the text must give.
JsonValue random_value(std::mt19937_64& random, JsonWriter& out, int depth) {
  switch (random() % (depth < 4 ? 8u : 6u)) {
    case 0:
      out.null();
      return JsonValue();
    case 1: {
      const bool flag = random() % 2 == 0;
      out.value(flag);
      return JsonValue::boolean(flag);
    }
    case 2: {
      const std::uint64_t number = random() >> (random() % 64);
      out.value(number);
      return JsonValue::number(number);
    }
    case 3: {
      const std::int64_t number = -1 - static_cast<std::int64_t>(random() >> (1 + random() % 63));
      out.value(number);
      return JsonValue::number(number);
    }
    case 4: {
      const double number = random_double(random);
      out.value(number);
      return JsonValue::number(number);
    }
    case 5: {
      std::string text = random_text(random);
      out.value(text);
      return JsonValue::string(std::move(text));
    }
    case 6: {
      out.begin_array();
      std::vector<JsonValue> items;
      for (std::uint64_t n = random() % 5; n > 0; --n) items.push_back(random_value(random, out, depth + 1));
      out.end_array();
      return JsonValue::array(std::move(items));
    }
    default: {
      out.begin_object();
      JsonValue::Members members;
      for (std::uint64_t n = random() % 5; n > 0; --n) {
        std::string name = random_text(random);
        out.key(name);
        JsonValue member = random_value(random, out, depth + 1);
        members.emplace_back(std::move(name), std::move(member));
      }
      out.end_object();
      return JsonValue::object(std::move(members));
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(json_value)

BOOST_AUTO_TEST_CASE(every_kind_parses_and_other_accessors_give_empty_answers) {
  const JsonValue null = parsed(" null ");
  BOOST_TEST(null.is_null());
  BOOST_TEST((null.kind() == JsonValue::Kind::null));
  BOOST_TEST(!null.as_bool());
  BOOST_TEST(null.as_number() == 0.0);
  BOOST_TEST(null.as_u64() == 0u);
  BOOST_TEST(null.as_string().empty());
  BOOST_TEST(null.items().empty());
  BOOST_TEST(null.members().empty());
  BOOST_TEST((null.find("a") == nullptr));
  BOOST_TEST(null["a"].is_null());
  BOOST_TEST(null[0].is_null());

  BOOST_TEST(parsed("true").is_bool());
  BOOST_TEST((parsed("true").kind() == JsonValue::Kind::boolean));
  BOOST_TEST(parsed("true").as_bool());
  BOOST_TEST(!parsed("false").as_bool());
  BOOST_TEST(parsed("false").is_bool());
  BOOST_TEST(parsed("true").as_number() == 0.0);

  const JsonValue number = parsed("\t-1.5e+3\r\n");
  BOOST_TEST(number.is_number());
  BOOST_TEST((number.kind() == JsonValue::Kind::number));
  BOOST_TEST(number.as_number() == -1500.0);
  BOOST_TEST(!number.is_exact_integer());
  BOOST_TEST(number.as_i64() == -1500);  // whole, though not written as an integer
  BOOST_TEST(number.as_u64() == 0u);
  BOOST_TEST(!number.as_bool());
  BOOST_TEST(number.as_string().empty());
  BOOST_TEST(parsed("0").is_exact_integer());
  BOOST_TEST(parsed("0.25").as_number() == 0.25);
  BOOST_TEST(parsed("1E2").as_number() == 100.0);
  BOOST_TEST(parsed("1e-2").as_number() == 0.01);

  const JsonValue text = parsed(R"("text")");
  BOOST_TEST(text.is_string());
  BOOST_TEST((text.kind() == JsonValue::Kind::string));
  BOOST_TEST(text.as_string() == "text");
  BOOST_TEST(text.as_number() == 0.0);
  BOOST_TEST(text.items().empty());
  BOOST_TEST(parsed(R"("")").as_string().empty());

  const JsonValue array = parsed(R"([1, "two", null])");
  BOOST_TEST(array.is_array());
  BOOST_TEST((array.kind() == JsonValue::Kind::array));
  BOOST_TEST_REQUIRE(array.items().size() == 3u);
  BOOST_TEST(array[0].as_u64() == 1u);
  BOOST_TEST(array[1].as_string() == "two");
  BOOST_TEST(array[2].is_null());
  BOOST_TEST(array[3].is_null());  // out of range
  BOOST_TEST(array["a"].is_null());
  BOOST_TEST(array.members().empty());

  const JsonValue object = parsed(R"({"a": 1})");
  BOOST_TEST(object.is_object());
  BOOST_TEST((object.kind() == JsonValue::Kind::object));
  BOOST_TEST_REQUIRE(object.members().size() == 1u);
  BOOST_TEST(object.members()[0].first == "a");
  BOOST_TEST(object["a"].as_u64() == 1u);
  BOOST_TEST((object.find("a") == &object.members()[0].second));
  BOOST_TEST(object[0].is_null());  // not an array
  BOOST_TEST(object.items().empty());

  for (const char* empty : {"[]", "[ ]", "{}", "{ \n}"}) {
    const JsonValue value = parsed(empty);
    BOOST_TEST((value.is_array() || value.is_object()), empty);
    BOOST_TEST((value.items().empty() && value.members().empty()), empty);
  }
}

BOOST_AUTO_TEST_CASE(nested_values_keep_member_order_and_repeated_names) {
  const JsonValue doc =
      parsed(R"({"z": 1, "a": {"m": [10, {"k": [true]}], "b": false}, "z": 2, "": "empty name", "e": [[], {}]})");
  std::string names;
  for (const auto& [name, member] : doc.members()) names += name + ",";
  BOOST_TEST(names == "z,a,z,,e,");
  BOOST_TEST(doc["z"].as_u64() == 1u);  // the first of the two
  BOOST_TEST(doc.members()[2].second.as_u64() == 2u);
  BOOST_TEST(doc["a"]["m"].items().size() == 2u);
  BOOST_TEST(doc["a"]["m"][0].as_u64() == 10u);
  BOOST_TEST(doc["a"]["m"][1]["k"][0].as_bool());
  BOOST_TEST(doc["a"]["b"].is_bool());
  BOOST_TEST(doc[""].as_string() == "empty name");
  BOOST_TEST(doc["e"][0].is_array());
  BOOST_TEST(doc["e"][1].is_object());
  BOOST_TEST(doc["missing"]["deeper"][3].is_null());
  BOOST_TEST(doc["a"]["m"][1]["k"][1].is_null());

  // Member names are compared as decoded text.
  BOOST_TEST(parsed(R"({"\u0061": 5})")["a"].as_u64() == 5u);
}

BOOST_AUTO_TEST_CASE(integer_literals_are_exact_to_u64_max_and_down_to_i64_min) {
  const JsonValue u64_max = parsed("18446744073709551615");
  BOOST_TEST(u64_max.is_exact_integer());
  BOOST_TEST(u64_max.as_u64() == std::numeric_limits<std::uint64_t>::max());
  BOOST_TEST(u64_max.as_i64() == 0);  // does not fit
  BOOST_TEST(parsed("9007199254740993").as_u64() == 9007199254740993u);  // 2^53 + 1: no double holds it
  BOOST_TEST(parsed("9223372036854775807").as_i64() == std::numeric_limits<std::int64_t>::max());
  BOOST_TEST(parsed("9223372036854775808").as_i64() == 0);
  BOOST_TEST(parsed("9223372036854775808").as_u64() == 9223372036854775808u);

  BOOST_TEST(parsed("-1").as_i64() == -1);
  BOOST_TEST(parsed("-1").as_u64() == 0u);
  BOOST_TEST(parsed("-1").as_number() == -1.0);
  BOOST_TEST(parsed("-9223372036854775807").as_i64() == -9223372036854775807);
  const JsonValue i64_min = parsed("-9223372036854775808");
  BOOST_TEST(i64_min.is_exact_integer());
  BOOST_TEST(i64_min.as_i64() == std::numeric_limits<std::int64_t>::min());

  // Beyond 64 bits an integer literal is a double only, and no integer.
  const JsonValue above = parsed("18446744073709551616");
  BOOST_TEST(!above.is_exact_integer());
  BOOST_TEST(above.as_u64() == 0u);
  BOOST_TEST(above.as_number() == 18446744073709551616.0);
  BOOST_TEST(parsed("-9223372036854775809").as_i64() == 0);
  BOOST_TEST(parsed("123456789012345678901234567890").as_number() == 123456789012345678901234567890.0);

  // Written otherwise, a whole number up to 2^53 still reads as an integer.
  BOOST_TEST(parsed("1e3").as_u64() == 1000u);
  BOOST_TEST(parsed("2.0").as_i64() == 2);
  BOOST_TEST(parsed("-2.0").as_u64() == 0u);
  BOOST_TEST(parsed("1.5").as_u64() == 0u);
  BOOST_TEST(parsed("1e300").as_u64() == 0u);

  const JsonValue negative_zero = parsed("-0");
  BOOST_TEST(std::signbit(negative_zero.as_number()));
  BOOST_TEST(negative_zero.as_i64() == 0);
  BOOST_TEST(negative_zero.as_u64() == 0u);
  BOOST_TEST((negative_zero == parsed("0")));
}

BOOST_AUTO_TEST_CASE(escapes_and_surrogate_pairs_decode_to_utf8) {
  BOOST_TEST(parsed(R"("\"\\\/\b\f\n\r\t")").as_string() == "\"\\/\b\f\n\r\t");
  BOOST_TEST(parsed(R"("\u0041\u00e9\u07FF\u0800\u20AC\uffff")").as_string() ==
             "A\xc3\xa9\xdf\xbf\xe0\xa0\x80\xe2\x82\xac\xef\xbf\xbf");
  BOOST_TEST(parsed(R"("\u0000")").as_string() == std::string(1, '\0'));
  BOOST_TEST(parsed(R"("\ud83d\ude00")").as_string() == "\xf0\x9f\x98\x80");  // U+1F600
  BOOST_TEST(parsed(R"("\uD834\uDD1E")").as_string() == "\xf0\x9d\x84\x9e");  // U+1D11E
  BOOST_TEST(parsed(R"("\ud800\udc00")").as_string() == "\xf0\x90\x80\x80");  // U+10000
  BOOST_TEST(parsed(R"("\udbff\udfff")").as_string() == "\xf4\x8f\xbf\xbf");  // U+10FFFF
  BOOST_TEST(parsed(R"("a\ud83d\ude00b")").as_string() == "a\xf0\x9f\x98\x80" "b");
  // Raw UTF-8 and DEL pass through.
  BOOST_TEST(parsed("\"rail \xc3\xa9th1 \xf0\x9f\x98\x80 \x7f\"").as_string() ==
             "rail \xc3\xa9th1 \xf0\x9f\x98\x80 \x7f");
}

BOOST_AUTO_TEST_CASE(malformed_inputs_are_refused_saying_what_and_where) {
  struct Case {
    std::string_view input;
    std::string_view message;
  };
  const Case cases[] = {
      {"", "JSON: expected a value at offset 0 (end of input)"},
      {"   ", "expected a value at offset 3 (end of input)"},
      {"[", "expected a value at offset 1 (end of input)"},
      {"[1", "expected ',' or ']' at offset 2 (end of input)"},
      {"[1 2]", "expected ',' or ']' at offset 3"},
      {"[1,]", "expected a value at offset 3"},
      {"[,1]", "expected a value at offset 1"},
      {"{", "expected a member name at offset 1 (end of input)"},
      {R"({"a"})", "expected ':' at offset 4"},
      {R"({"a":})", "expected a value at offset 5"},
      {R"({"a":1,})", "expected a member name at offset 7"},
      {R"({"a":1 "b":2})", "expected ',' or '}' at offset 7"},
      {"{'a':1}", "expected a member name at offset 1"},
      {"{a:1}", "expected a member name at offset 1"},
      {"[1] [2]", "unexpected text after the value at offset 4"},
      {"1 2", "unexpected text after the value at offset 2"},
      {std::string_view("[1]\0", 4), "unexpected text after the value at offset 3"},
      {"// comment\n1", "expected a value at offset 0"},
      {"[1,/* comment */2]", "expected a value at offset 3"},
      {"\xef\xbb\xbf{}", "expected a value at offset 0"},  // a byte order mark
      {"\f1", "expected a value at offset 0"},              // not JSON white space
      {"01", "leading zero in number at offset 0"},
      {"[-012]", "leading zero in number at offset 1"},
      {"1.", "expected a digit at offset 2 (end of input)"},
      {"1.e5", "expected a digit at offset 2"},
      {"1e", "expected a digit at offset 2"},
      {"1e+", "expected a digit at offset 3"},
      {"-", "expected a digit at offset 1"},
      {"+1", "expected a value at offset 0"},
      {".5", "expected a value at offset 0"},
      {"0x10", "unexpected text after the value at offset 1"},
      {"NaN", "expected a value at offset 0"},
      {"nan", "invalid literal at offset 0"},
      {"Infinity", "expected a value at offset 0"},
      {"-Infinity", "expected a digit at offset 1"},
      {"1e400", "number out of range at offset 0"},
      {"[-1e400]", "number out of range at offset 1"},
      {"1e-400", "number out of range at offset 0"},
      {"tru", "invalid literal at offset 0"},
      {"True", "expected a value at offset 0"},
      {"nul", "invalid literal at offset 0"},
      {"truex", "unexpected text after the value at offset 4"},
      {R"("abc)", "unterminated string at offset 0"},
      {R"(["a", "b)", "unterminated string at offset 6"},
      {R"("\)", "unterminated string at offset 0"},
      {"\"\x01\"", "control character in string at offset 1"},
      {"\"a\tb\"", "control character in string at offset 2"},
      {"\"a\nb\"", "control character in string at offset 2"},
      {R"("\x41")", "invalid escape at offset 1"},
      {R"("\U0041")", "invalid escape at offset 1"},
      {R"("\u12")", "invalid \\u escape at offset 1"},
      {R"("\u12G4")", "invalid \\u escape at offset 1"},
      {R"("\ud800")", "unpaired surrogate in \\u escape at offset 1"},
      {R"("\udc00")", "unpaired surrogate in \\u escape at offset 1"},
      {R"("\ud800\u0041")", "unpaired surrogate in \\u escape at offset 1"},
      {R"("\ud800\ud800")", "unpaired surrogate in \\u escape at offset 1"},
      {R"("\ud800x")", "unpaired surrogate in \\u escape at offset 1"},
      {R"("\ud800\u00")", "invalid \\u escape at offset 7"},
      {"\"\xff\"", "invalid UTF-8 in string at offset 1"},
      {"\"ab\xc3\"", "invalid UTF-8 in string at offset 3"},        // cut short
      {"\"\xc0\xaf\"", "invalid UTF-8 in string at offset 1"},      // overlong
      {"\"\xed\xa0\x80\"", "invalid UTF-8 in string at offset 1"},  // a surrogate, encoded
      {"\"\xf4\x90\x80\x80\"", "invalid UTF-8 in string at offset 1"},  // above U+10FFFF
      {"\xff", "expected a value at offset 0"},
  };
  for (const Case& c : cases) {
    const std::string input(c.input);
    BOOST_TEST_CONTEXT("input '" << input << "'") {
      const std::string message = error_of(c.input);
      BOOST_TEST(message.starts_with("JSON: "), message);
      BOOST_TEST(message.find(c.message) != std::string::npos, message << " should say " << c.message);
    }
  }
}

BOOST_AUTO_TEST_CASE(nesting_deeper_than_128_is_refused) {
  const auto arrays = [](std::size_t levels) { return std::string(levels, '[') + std::string(levels, ']'); };
  const JsonValue deepest = parsed(arrays(128));
  const JsonValue* level = &deepest;
  int depth = 0;
  for (; level->is_array(); level = &(*level)[0]) ++depth;
  BOOST_TEST(depth == 128);
  BOOST_TEST(error_of(arrays(129)) == "JSON: nesting deeper than 128 at offset 128");

  std::string objects;
  for (int i = 0; i < 129; ++i) objects += R"({"a":)";
  objects += "1" + std::string(129, '}');
  BOOST_TEST(error_of(objects).find("nesting deeper than 128 at offset 640") != std::string::npos, error_of(objects));
  // 128 levels (an object, 127 arrays), left open: refused at the end of the input, not for depth.
  const std::string open_128 = R"({"a":)" + std::string(127, '[') + "1";
  BOOST_TEST(error_of(open_128) == "JSON: expected ',' or ']' at offset 133 (end of input)");

  // Far deeper input is refused at the limit, without recursing into the rest.
  BOOST_TEST(error_of(std::string(1'000'000, '[')).find("nesting deeper than 128") != std::string::npos);
  BOOST_TEST(error_of(std::string(1'000'000, '{')).find("expected a member name") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(what_the_writer_writes_parses_back_to_the_same_content) {
  JsonWriter w;
  w.begin_object()
      .field("name", "rail \"eth0\"\n\\ \x01 \xc3\xa9")
      .field("up", true)
      .field("down", false)
      .field("max", std::numeric_limits<std::uint64_t>::max())
      .field("min", std::numeric_limits<std::int64_t>::min())
      .field("count", 3)
      .field("ratio", 0.1)
      .field("tiny", 5e-324)
      .field("huge", std::numeric_limits<double>::max())
      .field("whole", 1e21)
      .field("not a number", std::nan(""))
      .key("none")
      .null()
      .key("list")
      .begin_array()
      .value(-7)
      .value("two")
      .begin_object()
      .end_object()
      .begin_array()
      .end_array()
      .end_array()
      .end_object();
  const JsonValue expected = JsonValue::object({
      {"name", JsonValue::string("rail \"eth0\"\n\\ \x01 \xc3\xa9")},
      {"up", JsonValue::boolean(true)},
      {"down", JsonValue::boolean(false)},
      {"max", JsonValue::number(std::numeric_limits<std::uint64_t>::max())},
      {"min", JsonValue::number(std::numeric_limits<std::int64_t>::min())},
      {"count", JsonValue::number(3)},
      {"ratio", JsonValue::number(0.1)},
      {"tiny", JsonValue::number(5e-324)},
      {"huge", JsonValue::number(std::numeric_limits<double>::max())},
      {"whole", JsonValue::number(1e21)},
      {"not a number", JsonValue()},  // the writer writes non-finite numbers as null
      {"none", JsonValue()},
      {"list", JsonValue::array({JsonValue::number(-7), JsonValue::string("two"), JsonValue::object({}),
                                 JsonValue::array({})})},
  });
  const JsonValue back = parsed(w.text());
  BOOST_TEST((back == expected), w.text());
  BOOST_TEST(back["max"].as_u64() == std::numeric_limits<std::uint64_t>::max());
  BOOST_TEST(back["min"].as_i64() == std::numeric_limits<std::int64_t>::min());
  BOOST_TEST(back["tiny"].as_number() == 5e-324);
  // And write_json writes it as JsonWriter did.
  BOOST_TEST(to_json(back) == w.text());
  BOOST_TEST(to_json(expected) == w.text());

  // Equality is about content.
  BOOST_TEST((parsed("[1, 2]") != parsed("[2, 1]")));
  BOOST_TEST((parsed(R"({"a":1,"b":2})") != parsed(R"({"b":2,"a":1})")));
  BOOST_TEST((parsed("100") == parsed("1e2")));
  BOOST_TEST((parsed("1") != parsed("true")));
  BOOST_TEST((parsed(R"("\u00e9")") == parsed("\"\xc3\xa9\"")));
}

BOOST_AUTO_TEST_CASE(random_documents_from_the_writer_parse_back_to_the_same_content) {
  const std::uint64_t seed = ftmpi::test::seed_for("json_value random documents");
  BOOST_TEST_CONTEXT("seed " << seed) {
    std::mt19937_64 random(seed);
    for (int i = 0; i < 2000; ++i) {
      JsonWriter w;
      const JsonValue expected = random_value(random, w, 0);
      const auto back = parse_json(w.text());
      BOOST_TEST_REQUIRE(back.is_ok(), w.text() << ": " << back.status().message());
      BOOST_TEST_REQUIRE((*back == expected), w.text());
      BOOST_TEST_REQUIRE(to_json(*back) == w.text());
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
