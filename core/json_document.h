// The one JSON reader of hetnet (device profiles, the HTTP front end's bodies, printed protos).
//
// Why not rapidjson's own Document::Parse: Debian's RapidJSON 1.1.0 turns decimal text into doubles
// with code that reads far outside its power-of-ten table on some long numbers with a large negative
// exponent (full precision; upstream issue 1251), and its normal precision can be one ulp off. Here
// the reader hands every number over as text and ParseJsonNumber converts it with std::from_chars:
// exact, and bounded by the token alone. Parsing is iterative and depth-limited, so no input can
// exhaust the stack.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

namespace hetnet {

constexpr int kMaxJsonDepth = 100;

struct JsonParseOptions {
  bool allow_nan_and_infinity = false;  // NaN, Infinity, -Infinity as numbers (Triton accepts them)
  int max_depth = kMaxJsonDepth;        // nested arrays and objects
};

struct JsonParseResult {
  bool ok = true;
  bool too_deep = false;  // nesting beyond max_depth (message says so too)
  size_t offset = 0;      // byte offset of the error
  std::string message;    // RapidJSON's English text of the error, or why a number was refused
};

// Parses `text` (not NUL-terminated) into `doc`; strings are copied into its allocator. UTF-8 is
// validated. On failure `doc` holds no partial value.
JsonParseResult ParseJsonDocument(std::string_view text, rapidjson::Document* doc, const JsonParseOptions& options = {});

// One JSON number token as the grammar accepted it, e.g. "-12", "1.5e-3", "NaN", "-Infinity".
struct JsonNumber {
  enum class Kind { kInt64, kUint64, kDouble, kTooBig };
  Kind kind = Kind::kTooBig;
  int64_t i = 0;   // kInt64 (negative integers)
  uint64_t u = 0;  // kUint64 (non-negative integers)
  double d = 0;    // kDouble: integers beyond 64 bits, fractions, exponents; underflow gives +-0
};
JsonNumber ParseJsonNumber(std::string_view token);

}  // namespace hetnet
