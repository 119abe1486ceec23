// Large float Add / Sub / Mul / Div on the CPU (device/math_cpu.cc BroadcastBinary): an output of
// 16 MiB and more is written with non-temporal stores, in chunks over the intra-op pool. Each op
// against the scalar expression, bitwise, on an output that starts off the 64-byte boundary and
// ends in a tail of the vector width, with NaN, infinities and zeros among the inputs, on 1 and 2
// threads; and one below the size, by the ordinary loop.
#include <catch2/catch.hpp>

#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/context.h"
#include "core/intra_op_threads.h"
#include "device/math.h"

using namespace hetnet;

namespace {

bool SameBits(float x, float y) { return std::memcmp(&x, &y, sizeof x) == 0 || (x != x && y != y); }

}  // namespace

TEST_CASE("cpu kernels: float Add, Sub, Mul and Div streamed past 16 MiB equal the scalar expression bitwise",
          "[ops][cpu_kernels][pool]") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-4.f, 4.f);
  for (const int64_t n : {int64_t{(16 << 20) / 4} + 37, int64_t{1} << 20}) {  // over 16 MiB; 4 MiB
    std::vector<float> a(n), b(n), store(n + 16);
    for (int64_t i = 0; i < n; ++i) a[i] = u(rng), b[i] = u(rng);
    const float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(), 0.f, -0.f};
    for (int k = 0; k < 200; ++k) a[rng() % n] = specials[k % 5], b[rng() % n] = specials[(k / 5) % 5];
    float* c = store.data() + 1;  // off the 64-byte boundary: the head runs scalar
    for (math::BinaryOp op : {math::BinaryOp::Add, math::BinaryOp::Sub, math::BinaryOp::Mul, math::BinaryOp::Div})
      for (int threads : {1, 2}) {
        INFO("n " << n << ", op " << static_cast<int>(op) << ", " << threads << " threads");
        ScopedIntraOpThreads team(threads);
        std::fill(store.begin(), store.end(), 123.f);
        math::BroadcastBinary<float, CPUContext>(op, 1, n, 1, a.data(), b.data(), c, nullptr);
        int64_t wrong = 0;
        for (int64_t i = 0; i < n; ++i) {
          const float want = op == math::BinaryOp::Add   ? a[i] + b[i]
                             : op == math::BinaryOp::Sub ? a[i] - b[i]
                             : op == math::BinaryOp::Mul ? a[i] * b[i]
                                                         : a[i] / b[i];
          wrong += !SameBits(c[i], want);
        }
        CHECK(wrong == 0);
        CHECK(store[0] == 123.f);  // nothing written outside c
        CHECK(c[n] == 123.f);
      }
  }
}
