// ParseJsonDocument / ParseJsonNumber (core/json_document.h): numbers read exactly and safely (the
// inputs that crashed RapidJSON's own conversion included), RapidJSON's integer typing, NaN and
// Infinity only when allowed, the depth limit, UTF-8 validation, and errors with offsets.
#include <catch2/catch.hpp>

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "core/json_document.h"

using namespace hetnet;

namespace {

rapidjson::Document Parsed(const std::string& text, const JsonParseOptions& options = {}) {
  rapidjson::Document doc;
  JsonParseResult r = ParseJsonDocument(text, &doc, options);
  INFO(text.substr(0, 200) << " -> " << r.message);
  REQUIRE(r.ok);
  return doc;
}

JsonParseResult Failure(const std::string& text, const JsonParseOptions& options = {}) {
  rapidjson::Document doc;
  JsonParseResult r = ParseJsonDocument(text, &doc, options);
  INFO(text.substr(0, 200));
  REQUIRE_FALSE(r.ok);
  return r;
}

uint64_t Bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

// The number fuzz_device_profile found (about 530 digits, then e-444): RapidJSON 1.1.0's
// full-precision conversion indexed its power table with ~5e8 and crashed.
std::string FuzzCrashNumber() {
  return "10999999999999998." + std::string("99999999999999919999999900000000000020") + std::string(450, '9') +
         "909999999999999999990444442e-444";
}

}  // namespace

TEST_CASE("json: numbers that crashed RapidJSON's conversion read as zero", "[json]") {
  for (const std::string& text : {FuzzCrashNumber(), std::string("128.74836467836484838364836483643636483648e-336"),
                                  "-" + FuzzCrashNumber(), "0." + std::string(100000, '0') + "1"}) {
    rapidjson::Document doc = Parsed("[" + text + "]");
    REQUIRE(doc[0].IsDouble());
    CHECK(doc[0].GetDouble() == 0.0);
    CHECK(std::signbit(doc[0].GetDouble()) == (text[0] == '-'));
  }
  // 1.28748e-334 is below the smallest subnormal too; 1.2e-320 is a subnormal and kept.
  CHECK(Parsed("[1.2e-320]")[0].GetDouble() == 1.2e-320);
  CHECK(Parsed("[4.9406564584124654e-324]")[0].GetDouble() == std::numeric_limits<double>::denorm_min());
}

TEST_CASE("json: every double's shortest text reads back to the same bits", "[json]") {
  std::mt19937_64 rng(20261127);
  int checked = 0;
  for (int i = 0; i < 20000; ++i) {
    const double d = [&] {
      uint64_t b = rng();
      double v;
      std::memcpy(&v, &b, sizeof v);
      return v;
    }();
    if (!std::isfinite(d)) continue;
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, d);
    const std::string text(buf, r.ptr);
    JsonNumber n = ParseJsonNumber(text);
    INFO(text);
    if (n.kind == JsonNumber::Kind::kUint64) {  // a whole double printed without '.': an integer, as RapidJSON reads it
      REQUIRE(static_cast<double>(n.u) == d);
    } else if (n.kind == JsonNumber::Kind::kInt64) {
      REQUIRE(static_cast<double>(n.i) == d);
    } else {
      REQUIRE(n.kind == JsonNumber::Kind::kDouble);
      REQUIRE(Bits(n.d) == Bits(d));
    }
    ++checked;
  }
  CHECK(checked > 19000);
  // Through the document too, with a value RapidJSON's normal precision reads one ulp off.
  CHECK(Bits(Parsed("[2.220446049250313e-16]")[0].GetDouble()) == Bits(2.220446049250313e-16));
  CHECK(Parsed("[1.7976931348623157e308]")[0].GetDouble() == std::numeric_limits<double>::max());
}

TEST_CASE("json: integers are typed as RapidJSON types them", "[json]") {
  rapidjson::Document doc = Parsed(
      "[0, -0, 2147483647, -2147483648, 4294967295, 4294967296, -2147483649, 18446744073709551615, "
      "-9223372036854775808, 18446744073709551616, -9223372036854775809, 7.0, 1e2]");
  CHECK(doc[0].IsUint());
  CHECK((doc[1].IsInt() && doc[1].GetInt() == 0));
  CHECK((doc[2].IsInt() && doc[2].GetInt() == 2147483647));
  CHECK((doc[3].IsInt() && doc[3].GetInt() == std::numeric_limits<int>::min()));
  CHECK((doc[4].IsUint() && !doc[4].IsInt() && doc[4].GetUint() == 4294967295u));
  CHECK((doc[5].IsUint64() && !doc[5].IsUint() && doc[5].GetUint64() == 4294967296u));
  CHECK((doc[6].IsInt64() && !doc[6].IsInt() && doc[6].GetInt64() == -2147483649LL));
  CHECK((doc[7].IsUint64() && doc[7].GetUint64() == std::numeric_limits<uint64_t>::max()));
  CHECK((doc[8].IsInt64() && doc[8].GetInt64() == std::numeric_limits<int64_t>::min()));
  CHECK((doc[9].IsDouble() && doc[9].GetDouble() == 18446744073709551616.0));
  CHECK((doc[10].IsDouble() && doc[10].GetDouble() == -9223372036854775809.0));
  CHECK((doc[11].IsDouble() && doc[11].GetDouble() == 7.0));
  CHECK((doc[12].IsDouble() && doc[12].GetDouble() == 100.0));
}

TEST_CASE("json: numbers too big for a double are refused with the offset", "[json]") {
  for (const std::string& text : {std::string("1e400"), std::string("-1.8e308"), std::string("0.5e310"),
                                  std::string(400, '9'), "1" + std::string(400, '0') + ".5"}) {
    JsonParseResult r = Failure("[1, " + text + "]");
    INFO(text);
    CHECK(r.message == "Number too big to be stored in double.");
    CHECK(r.offset == 4);
    CHECK_FALSE(r.too_deep);
  }
}

TEST_CASE("json: NaN and Infinity only when allowed", "[json]") {
  CHECK(Failure("[NaN]").offset == 1);
  Failure("[-Infinity]");
  JsonParseOptions allow;
  allow.allow_nan_and_infinity = true;
  rapidjson::Document doc = Parsed("[NaN, Infinity, -Infinity, Inf, -Inf, 1.5]", allow);
  CHECK(std::isnan(doc[0].GetDouble()));
  CHECK(doc[1].GetDouble() == std::numeric_limits<double>::infinity());
  CHECK(doc[2].GetDouble() == -std::numeric_limits<double>::infinity());
  CHECK(doc[3].GetDouble() == std::numeric_limits<double>::infinity());
  CHECK(doc[4].GetDouble() == -std::numeric_limits<double>::infinity());
  CHECK(doc[5].GetDouble() == 1.5);
  Failure("[Nan]", allow);
  Failure("[Infinit]", allow);
}

TEST_CASE("json: nesting beyond the limit, bad UTF-8 and bad grammar are errors", "[json]") {
  const std::string ok(kMaxJsonDepth, '[');
  Parsed(ok + std::string(kMaxJsonDepth, ']'));
  JsonParseResult deep = Failure(std::string(1000000, '['));
  CHECK(deep.too_deep);
  CHECK(deep.message == "JSON nesting depth exceeds maximum allowed limit (100)");
  JsonParseOptions shallow;
  shallow.max_depth = 2;
  CHECK(Failure(R"({"a": [{}]})", shallow).too_deep);

  JsonParseResult utf8 = Failure("[\"a\xff\"]");
  CHECK(utf8.message == "Invalid encoding in string.");
  JsonParseResult bad = Failure(R"({"a": 1,})");
  CHECK(bad.offset == 8);
  CHECK_FALSE(bad.too_deep);
  Failure("[1.]");
  Failure("[-]");
  Failure("[1e]");
  Failure("[01]");
  Failure("");
}

TEST_CASE("json: a failed parse leaves the document usable", "[json]") {
  rapidjson::Document doc;
  REQUIRE(ParseJsonDocument(R"({"a": [1, 2, 3]})", &doc).ok);
  REQUIRE_FALSE(ParseJsonDocument(R"({"b": [1e999]})", &doc).ok);
  REQUIRE(ParseJsonDocument(R"({"c": "x"})", &doc).ok);
  CHECK(doc["c"].GetString() == std::string("x"));
  CHECK_FALSE(doc.HasMember("a"));
}
