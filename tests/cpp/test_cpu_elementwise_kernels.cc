// The vectorized CPU kernels (issue 16 item 4) on inputs long enough for their vector loops and the
// OpenMP chunks (above 64K elements, an odd tail): results against float64 references within 1 ulp
// (transcendental) or bitwise (sqrt, powf's exact exponents), with NaN, infinities, signed zeros
// and subnormals scattered through the array (the harness's short rows only reach scalar tails).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "tests/cpp/op_test_util.h"

namespace hetnet {
namespace {
using namespace optest;

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();
const float kDenorm = std::numeric_limits<float>::denorm_min();

// Distance in representable floats; NaN only matches NaN.
int64_t UlpDistance(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : std::numeric_limits<int64_t>::max();
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  const int64_t oa = ia < 0 ? int64_t{INT32_MIN} - ia : ia, ob = ib < 0 ? int64_t{INT32_MIN} - ib : ib;
  return std::llabs(oa - ob);
}
bool SameBits(float a, float b) { return std::memcmp(&a, &b, 4) == 0 || (std::isnan(a) && std::isnan(b)); }

// n random values in [lo, hi] with `special` written at several places: the start, the 16K chunk
// boundary, the middle and the last elements (the scalar tail).
std::vector<float> WithSpecials(int64_t n, float lo, float hi, const std::vector<float>& special, unsigned seed) {
  std::vector<float> v = RandomVec(static_cast<size_t>(n), seed, lo, hi);
  const int64_t starts[] = {0, 16384 - 3, n / 2, n - static_cast<int64_t>(special.size())};
  for (int64_t s : starts)
    for (size_t k = 0; k < special.size(); ++k)
      if (s >= 0 && s + static_cast<int64_t>(k) < n) v[s + k] = special[k];
  return v;
}

std::vector<float> RunUnary(const std::string& type, const std::vector<float>& x, bool in_place = false,
                            const std::vector<caffe2::Argument>& args = {}) {
  Workspace ws;
  Feed<float>(ws, "X", {static_cast<int64_t>(x.size())}, x);
  const std::string out = in_place ? "X" : "Y";
  RunOp(ws, MakeOp(type, {"X"}, {out}, args));
  return FetchVec<float>(ws, out);
}

template <typename Ref>
void RequireWithinUlp(const std::vector<float>& x, const std::vector<float>& got, Ref ref, int64_t max_ulp) {
  REQUIRE(got.size() == x.size());
  int64_t worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = ref(x[i]);
    const int64_t d = UlpDistance(got[i], want);
    if (d > max_ulp || (want == 0.f && !SameBits(got[i], want))) {
      INFO("element " << i << ": x = " << x[i] << " got " << got[i] << ", want " << want);
      REQUIRE(d <= max_ulp);
      REQUIRE(SameBits(got[i], want));  // zeros keep their sign
    }
    worst = std::max(worst, d);
  }
  CHECK(worst <= max_ulp);
}

const std::vector<float> kSpecials = {kNaN, -kNaN, kInf, -kInf, 0.f, -0.f, kDenorm, -kDenorm, 1e-40f, 1.f, -1.f,
                                      88.72f, 88.73f, -87.33f, -103.97f, -103.98f, 3e38f, -3e38f, 1.0000001f, 0.99999994f};
const int64_t kSizes[] = {37, 100003};

}  // namespace

TEST_CASE("cpu kernels: Exp within 1 ulp of float64 exp, specials as glibc", "[ops][cpu_kernels]") {
  for (int64_t n : kSizes) {
    const std::vector<float> x = WithSpecials(n, -105.f, 90.f, kSpecials, 1);
    auto ref = [](float v) { return static_cast<float>(std::exp(static_cast<double>(v))); };
    RequireWithinUlp(x, RunUnary("Exp", x), ref, 1);
    RequireWithinUlp(x, RunUnary("Exp", x, true), ref, 1);
  }
  // overflow and underflow edges against glibc itself
  const std::vector<float> x = RunUnary("Exp", {88.72f, 88.73f, -103.97f, -103.98f, -kInf, kInf});
  CHECK(std::isfinite(x[0]));
  CHECK(x[1] == kInf);
  CHECK(x[2] == kDenorm);
  CHECK(x[3] == 0.f);
  CHECK(x[4] == 0.f);
  CHECK(x[5] == kInf);
}

TEST_CASE("cpu kernels: Log within 1 ulp of float64 log, subnormals, zeros, negatives", "[ops][cpu_kernels]") {
  for (int64_t n : kSizes) {
    std::vector<float> x = WithSpecials(n, 1e-3f, 1e3f, kSpecials, 2);
    for (int64_t i = 5; i < n; i += 97) x[i] = std::ldexp(x[i], static_cast<int>(i % 300) - 150);  // wide range, subnormals
    auto ref = [](float v) { return static_cast<float>(std::log(static_cast<double>(v))); };
    RequireWithinUlp(x, RunUnary("Log", x), ref, 1);
    RequireWithinUlp(x, RunUnary("Log", x, true), ref, 1);
  }
}

TEST_CASE("cpu kernels: Sqrt is bitwise std::sqrt", "[ops][cpu_kernels]") {
  for (int64_t n : kSizes) {
    const std::vector<float> x = WithSpecials(n, -1.f, 1e6f, kSpecials, 3);
    for (bool in_place : {false, true}) {
      const std::vector<float> y = RunUnary("Sqrt", x, in_place);
      for (size_t i = 0; i < x.size(); ++i) {
        INFO("x = " << x[i] << " got " << y[i]);
        REQUIRE(SameBits(y[i], std::sqrt(x[i])));
      }
    }
  }
}

TEST_CASE("cpu kernels: Pow within an ulp of float64 pow, C's signs and special cases", "[ops][cpu_kernels]") {
  const float exponents[] = {2.f, -1.f, 1.f, 0.f, 0.5f, 2.5f, 3.f, -3.f, 4.f, -0.5f, 0.3f, 7.f, 100.f, 1e20f, kInf, -kInf, kNaN};
  // x of mixed signs, and positive (blocks of positive normal floats take PowFloats' fast path)
  for (int64_t n : kSizes)
    for (float e : exponents)
      for (float lo : {-1e3f, 1e-3f})
        for (bool in_place : {false, true}) {
          INFO("exponent " << e << ", n = " << n << ", x from " << lo << ", in place " << in_place);
          const std::vector<float> x = WithSpecials(n, lo, 1e3f, kSpecials, 4);
          const std::vector<float> y = RunUnary("Pow", x, in_place, {ArgF("exponent", e)});
          for (size_t i = 0; i < x.size(); ++i) {
            const float want = std::pow(x[i], e);
            const float want64 = static_cast<float>(std::pow(static_cast<double>(x[i]), static_cast<double>(e)));
            INFO(std::hexfloat << "x[" << i << "] = " << x[i] << " got " << y[i] << ", powf " << want);
            // x * x is correctly rounded; glibc's powf is an ulp off in rare near-halfway cases
            // (powf(0x1.fbe328p+8, 2) for one)
            if (e == 2.f) REQUIRE(SameBits(y[i], static_cast<float>(static_cast<double>(x[i]) * x[i])));
            if (e == 1.f || e == 0.f || !std::isfinite(e)) REQUIRE(SameBits(y[i], want));
            else REQUIRE(UlpDistance(y[i], want64) <= 1);
            if (want == 0.f || std::isinf(want)) REQUIRE(SameBits(y[i], want));  // signed zeros, infinities
          }
        }
}

TEST_CASE("cpu kernels: ReduceSum / ReduceMean over the innermost dims against float64 sums", "[ops][cpu_kernels]") {
  struct Shape {
    std::vector<int64_t> dims, axes;
  };
  const Shape shapes[] = {{{300, 1000}, {1}}, {{2, 70001}, {-1}}, {{5, 7, 33}, {1, 2}}, {{64, 17}, {1}}, {{3, 1, 40}, {1, 2}}};
  for (const Shape& sh : shapes)
    for (const char* type : {"ReduceSum", "ReduceMean"}) {
      const int64_t n = Numel(sh.dims), row = sh.dims.size() == 2 || sh.axes.size() == 1 ? sh.dims.back() : n / sh.dims[0];
      std::vector<float> x = RandomVec(static_cast<size_t>(n), 5, -1.f, 1.f);
      // row 0: a NaN; row 1: +inf; row 2: +inf and -inf (NaN); the rest finite
      x[row / 2] = kNaN;
      if (n / row > 2) {
        x[row + 3] = kInf;
        x[2 * row] = kInf;
        x[2 * row + row - 1] = -kInf;
      }
      Workspace ws;
      Feed<float>(ws, "X", sh.dims, x);
      RunOp(ws, MakeOp(type, {"X"}, {"Y"}, {ArgInts("axes", sh.axes), ArgI("keepdims", 0)}));
      const std::vector<float> y = FetchVec<float>(ws, "Y");
      REQUIRE(static_cast<int64_t>(y.size()) == n / row);
      const bool mean = std::string(type) == "ReduceMean";
      for (int64_t o = 0; o < n / row; ++o) {
        double s = 0, abs_sum = 0;
        for (int64_t j = 0; j < row; ++j) {
          s += x[o * row + j];
          abs_sum += std::fabs(x[o * row + j]);
        }
        const float want = static_cast<float>(mean ? s / row : s);
        INFO(type << " row " << o << " of " << n / row << ": got " << y[o] << ", want " << want);
        if (!std::isfinite(want)) REQUIRE(SameBits(y[o], want));
        else REQUIRE(std::fabs(y[o] - want) <= std::max(std::fabs(want) * 1.2e-7, 1e-12 * abs_sum));
      }
    }
}

TEST_CASE("cpu kernels: Softmax rows against float64, NaN and +inf rows all NaN, -inf entries 0", "[ops][cpu_kernels]") {
  const std::vector<int64_t> shapes[] = {{300, 1000}, {3, 70001}, {7, 5}, {4, 33}};
  for (const auto& dims : shapes) {
    const int64_t rows = dims[0], d = dims[1];
    std::vector<float> x = RandomVec(static_cast<size_t>(rows * d), 6, -20.f, 20.f);
    x[1] = kNaN;                  // row 0: NaN
    x[d + 2] = kInf;              // row 1: +inf
    x[2 * d] = -kInf;             // row 2: one -inf (gives 0)
    x[2 * d + d - 1] = -kInf;
    if (rows > 3)
      for (int64_t j = 0; j < d; ++j) x[3 * d + j] += 1e4f;  // row 3: large values (shifted by the max)
    Workspace ws;
    Feed<float>(ws, "X", dims, x);
    RunOp(ws, MakeOp("Softmax", {"X"}, {"Y"}));
    const std::vector<float> y = FetchVec<float>(ws, "Y");
    REQUIRE(y.size() == x.size());
    for (int64_t i = 0; i < rows; ++i) {
      const float* xr = x.data() + i * d;
      // x - max in float, as the kernel does (its rounding is the op's, amplified by exp); the rest
      // in float64
      float m = -INFINITY;
      for (int64_t j = 0; j < d; ++j) m = std::max(m, xr[j]);
      auto e = [&](int64_t j) { return std::exp(static_cast<double>(xr[j] - m)); };
      double s = 0;
      for (int64_t j = 0; j < d; ++j) s += e(j);
      const bool nan_row = i < 2;
      for (int64_t j = 0; j < d; ++j) {
        const float got = y[i * d + j];
        INFO("row " << i << " col " << j << " of [" << rows << ", " << d << "]: x = " << xr[j] << " got " << got);
        if (nan_row) {
          REQUIRE(std::isnan(got));
          continue;
        }
        const float want = static_cast<float>(e(j) / s);
        if (want == 0.f) REQUIRE(got == 0.f);
        else REQUIRE(UlpDistance(got, want) <= 4);
      }
    }
  }
}

TEST_CASE("cpu kernels: ReduceSum / ReduceMean gradients are dY * scale, bitwise, for every axis layout", "[ops][cpu_kernels]") {
  const std::vector<int64_t> dims = {300, 7, 40};
  const std::vector<float> x = RandomVec(300 * 7 * 40, 7);
  for (const char* type : {"ReduceSumGradient", "ReduceMeanGradient"})
    for (const auto& axes : {std::vector<int64_t>{2}, std::vector<int64_t>{1, 2}, std::vector<int64_t>{0},
                             std::vector<int64_t>{1}}) {  // innermost, innermost, leading, neither
      INFO(type << " over " << axes.size() << " axes from " << axes[0]);
      const int64_t count = axes[0] == 0 ? 300 : axes == std::vector<int64_t>{1} ? 7 : axes.size() == 1 ? 40 : 280;
      const int64_t outs = 300 * 7 * 40 / count;
      std::vector<float> dy = RandomVec(static_cast<size_t>(outs), 8);
      dy[1] = kNaN;
      dy[2] = -kInf;
      Workspace ws;
      Feed<float>(ws, "dY", {outs}, dy);
      Feed<float>(ws, "X", dims, x);
      Feed<float>(ws, "Y", {outs}, dy);  // unused by the gradient
      RunOp(ws, MakeOp(type, {"dY", "X", "Y"}, {"dX"}, {ArgInts("axes", axes), ArgI("keepdims", 0)}));
      const std::vector<float> dx = FetchVec<float>(ws, "dX");
      REQUIRE(dx.size() == x.size());
      const float scale = std::string(type) == "ReduceMeanGradient" ? 1.f / static_cast<float>(count) : 1.f;
      for (int64_t i = 0; i < static_cast<int64_t>(dx.size()); ++i) {
        // the output element of x's element i: x is [300, 7, 40]
        const int64_t a = i / 280, b = (i / 40) % 7, c = i % 40;
        const int64_t o = axes[0] == 0 ? b * 40 + c : axes == std::vector<int64_t>{1} ? a * 40 + c : axes.size() == 1 ? a * 7 + b : a;
        INFO("dX[" << i << "] = " << dx[i] << " from dY[" << o << "] = " << dy[o]);
        REQUIRE(SameBits(dx[i], dy[o] * scale));
      }
    }
}

TEST_CASE("cpu kernels: ReduceSum / ReduceMean over leading dims are bitwise the in-order float64 sums", "[ops][cpu_kernels]") {
  struct Shape {
    std::vector<int64_t> dims, axes;
    int64_t rows;  // the reduced count; x is [rows, outputs]
  };
  const Shape shapes[] = {{{1000, 300}, {0}, 1000}, {{7, 33, 5}, {0, 1}, 231}, {{70001, 2}, {0}, 70001}, {{3, 1, 4}, {0}, 3}};
  for (const Shape& sh : shapes)
    for (const char* type : {"ReduceSum", "ReduceMean"}) {
      const int64_t n = Numel(sh.dims), outs = n / sh.rows;
      std::vector<float> x = RandomVec(static_cast<size_t>(n), 9, -1.f, 1.f);
      x[0] = kNaN;  // output 0: NaN
      if (outs > 2) {
        x[1] = kInf;  // output 1: +inf; output 2: +inf and -inf
        x[2] = kInf;
        x[outs + 2] = -kInf;
      }
      Workspace ws;
      Feed<float>(ws, "X", sh.dims, x);
      RunOp(ws, MakeOp(type, {"X"}, {"Y"}, {ArgInts("axes", sh.axes), ArgI("keepdims", 0)}));
      const std::vector<float> y = FetchVec<float>(ws, "Y");
      REQUIRE(static_cast<int64_t>(y.size()) == outs);
      for (int64_t o = 0; o < outs; ++o) {
        double s = 0;
        for (int64_t r = 0; r < sh.rows; ++r) s += x[r * outs + o];
        const float want = static_cast<float>(std::string(type) == "ReduceMean" ? s / sh.rows : s);
        INFO(type << " output " << o << " of " << outs << ": got " << y[o] << ", want " << want);
        REQUIRE(SameBits(y[o], want));
      }
    }
}

}  // namespace hetnet
