// See json_document.h: RapidJSON's reader for the grammar, std::from_chars for the numbers.
#include "core/json_document.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <system_error>

#include <rapidjson/encodedstream.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

namespace hetnet {

namespace {

namespace rj = rapidjson;

// True when the decimal number `body` (no sign, no NaN/Infinity) is below one, judged from where
// its first nonzero digit sits: tells an underflow from an overflow once from_chars says neither fits.
bool BelowOne(std::string_view body) {
  size_t e = body.find_first_of("eE");
  std::string_view mantissa = body.substr(0, e);
  long long exponent = 0;
  if (e != std::string_view::npos) {
    std::string_view digits = body.substr(e + 1);
    bool negative = !digits.empty() && digits[0] == '-';
    if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) digits.remove_prefix(1);
    for (char c : digits) exponent = std::min(exponent * 10 + (c - '0'), 1000000000LL);  // clamped: no overflow
    if (negative) exponent = -exponent;
  }
  size_t dot = mantissa.find('.');
  std::string_view integer = mantissa.substr(0, dot);
  std::string_view fraction = dot == std::string_view::npos ? std::string_view() : mantissa.substr(dot + 1);
  long long lead;  // the first nonzero digit is at 10^(lead - 1)
  if (size_t nz = integer.find_first_not_of('0'); nz != std::string_view::npos) {
    lead = static_cast<long long>(integer.size() - nz);
  } else {
    size_t f = fraction.find_first_not_of('0');
    if (f == std::string_view::npos) return true;  // zero
    lead = -static_cast<long long>(f);
  }
  return lead + exponent <= 0;
}

// Forwards SAX events to the document, turns number text into values, and stops at nesting deeper
// than the limit.
struct DocumentBuilder {
  rj::Document& d;
  int max_depth;
  int depth = 0;
  bool too_deep = false;
  bool number_too_big = false;

  bool Null() { return d.Null(); }
  bool Bool(bool b) { return d.Bool(b); }
  // With kParseNumbersAsStringsFlag the reader calls none of the typed number events.
  bool Int(int i) { return d.Int(i); }
  bool Uint(unsigned i) { return d.Uint(i); }
  bool Int64(int64_t i) { return d.Int64(i); }
  bool Uint64(uint64_t i) { return d.Uint64(i); }
  bool Double(double v) { return d.Double(v); }
  bool RawNumber(const char* s, rj::SizeType n, bool) {
    JsonNumber v = ParseJsonNumber(std::string_view(s, n));
    switch (v.kind) {
      case JsonNumber::Kind::kInt64:
        return v.i >= std::numeric_limits<int>::min() ? d.Int(static_cast<int>(v.i)) : d.Int64(v.i);
      case JsonNumber::Kind::kUint64:
        return v.u <= std::numeric_limits<unsigned>::max() ? d.Uint(static_cast<unsigned>(v.u)) : d.Uint64(v.u);
      case JsonNumber::Kind::kDouble:
        return d.Double(v.d);
      case JsonNumber::Kind::kTooBig:
        break;
    }
    number_too_big = true;
    return false;
  }
  bool String(const char* s, rj::SizeType n, bool copy) { return d.String(s, n, copy); }
  bool Key(const char* s, rj::SizeType n, bool copy) { return d.Key(s, n, copy); }
  bool Enter() {
    if (++depth > max_depth) {
      too_deep = true;
      return false;
    }
    return true;
  }
  bool StartObject() { return Enter() && d.StartObject(); }
  bool EndObject(rj::SizeType n) { --depth; return d.EndObject(n); }
  bool StartArray() { return Enter() && d.StartArray(); }
  bool EndArray(rj::SizeType n) { --depth; return d.EndArray(n); }
};

}  // namespace

JsonNumber ParseJsonNumber(std::string_view token) {
  JsonNumber out;
  const bool minus = !token.empty() && token[0] == '-';
  const std::string_view body = token.substr(minus ? 1 : 0);
  const char* begin = token.data();
  const char* end = token.data() + token.size();
  if (!body.empty() && (body[0] == 'N' || body[0] == 'I')) {  // the reader accepted NaN or Infinity
    out.kind = JsonNumber::Kind::kDouble;
    out.d = body[0] == 'N' ? std::numeric_limits<double>::quiet_NaN()
                           : (minus ? -1.0 : 1.0) * std::numeric_limits<double>::infinity();
    return out;
  }
  if (body.find_first_of(".eE") == std::string_view::npos) {  // an integer: exact when 64 bits hold it
    if (minus) {
      auto r = std::from_chars(begin, end, out.i);
      if (r.ec == std::errc() && r.ptr == end) {
        out.kind = JsonNumber::Kind::kInt64;
        return out;
      }
    } else {
      auto r = std::from_chars(begin, end, out.u);
      if (r.ec == std::errc() && r.ptr == end) {
        out.kind = JsonNumber::Kind::kUint64;
        return out;
      }
    }
  }
  auto r = std::from_chars(begin, end, out.d);  // correctly rounded
  if (r.ptr != end) return out;                 // not the JSON grammar: cannot come from the reader
  if (r.ec == std::errc()) {
    out.kind = JsonNumber::Kind::kDouble;
  } else if (r.ec == std::errc::result_out_of_range && BelowOne(body)) {
    out.kind = JsonNumber::Kind::kDouble;  // rounds to zero, as RapidJSON gives too
    out.d = minus ? -0.0 : 0.0;
  }
  return out;
}

JsonParseResult ParseJsonDocument(std::string_view text, rj::Document* doc, const JsonParseOptions& options) {
  rj::MemoryStream ms(text.data(), text.size());
  rj::EncodedInputStream<rj::UTF8<>, rj::MemoryStream> is(ms);
  rj::ParseResult parsed;
  bool too_deep = false, too_big = false;
  auto generator = [&](rj::Document& d) {
    DocumentBuilder builder{d, options.max_depth};
    rj::Reader reader;
    constexpr unsigned kFlags = rj::kParseIterativeFlag | rj::kParseValidateEncodingFlag | rj::kParseNumbersAsStringsFlag;
    parsed = options.allow_nan_and_infinity ? reader.Parse<kFlags | rj::kParseNanAndInfFlag>(is, builder)
                                            : reader.Parse<kFlags>(is, builder);
    too_deep = builder.too_deep;
    too_big = builder.number_too_big;
    return !parsed.IsError();
  };
  doc->Populate(generator);
  JsonParseResult result;
  if (!parsed.IsError()) return result;
  result.ok = false;
  result.offset = parsed.Offset();
  result.too_deep = too_deep;
  if (too_deep) {
    result.message = "JSON nesting depth exceeds maximum allowed limit (" + std::to_string(options.max_depth) + ")";
  } else {
    result.message = rj::GetParseError_En(too_big ? rj::kParseErrorNumberTooBig : parsed.Code());
  }
  return result;
}

}  // namespace hetnet
