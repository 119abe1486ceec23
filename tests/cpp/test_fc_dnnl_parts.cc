// The DNNL FC at 1, 2, 3 and 8 intra-op threads (operators/fc_op_dnnl.cc), against float64 loops:
// in bfloat16, bands of rows, each a one-thread primitive on hetnet's pool (uneven bands, more
// threads than rows), and one thread alone below the bands' size; float32 on oneDNN's team. Plain
// and transposed weights, with and without the fused Relu.
#include <catch2/catch.hpp>

#include <algorithm>
#include <tuple>

#include "core/bfloat16.h"
#include "core/intra_op_threads.h"
#include "core/operator.h"
#include "core/reduced_precision.h"
#include "core/workspace.h"
#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {

bool DnnlFcHere(DataType dtype) {
  if (ResolveEngine(MakeOp("FC", {"X", "W", "b"}, {"Y"}), Device::CPU()) != "DNNL") {
    WARN("skipped: no DNNL engine in this build");
    return false;
  }
  const caffe2::OperatorDef fc = MakeOp("FC", {"X", "W", "b"}, {"Y"});
  const ReducedPrecisionKernel* k = FindReducedPrecisionKernel("FC", DeviceType::CPU, "DNNL");
  if (dtype == DataType::BFloat16 && (!k || (k->accepts && !k->accepts(fc, dtype)))) {
    WARN("skipped: oneDNN has no bfloat16 kernels on this CPU");
    return false;
  }
  return true;
}

// Values that bfloat16 holds exactly, so both dtypes see the same inputs.
std::vector<float> Rounded(std::vector<float> v) {
  for (auto& x : v) x = BFloat16ToFloat(FloatToBFloat16(x));
  return v;
}

void FeedAs(Workspace& ws, const std::string& name, const std::vector<int64_t>& shape, const std::vector<float>& v,
            DataType dtype) {
  Tensor t(shape, dtype);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dtype == DataType::BFloat16) t.mutable_data<BFloat16>()[i] = FloatToBFloat16(v[i]);
    else t.mutable_data<float>()[i] = v[i];
  }
  *ws.CreateBlob(name)->GetMutable<Tensor>() = std::move(t);
}

std::vector<double> Values(const Tensor& t) {
  std::vector<double> out(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i)
    out[i] = t.dtype() == DataType::BFloat16 ? BFloat16ToFloat(t.data<BFloat16>()[i]) : t.data<float>()[i];
  return out;
}

}  // namespace

TEST_CASE("DNNL FC on several threads (bfloat16: bands of rows) equals the float64 result, float32 and bfloat16",
          "[ops][fc][dnnl][pool]") {
  for (DataType dtype : {DataType::Float, DataType::BFloat16}) {
    if (!DnnlFcHere(dtype)) continue;
    // 7 x 300 x 500: over the parts' 1M multiply-adds, 7 rows cut 3 + 4 at two threads; 5 x 40 x 30:
    // under it, one thread alone.
    for (auto [M, K, N] : {std::tuple<int64_t, int64_t, int64_t>{7, 300, 500}, {5, 40, 30}})
      for (bool transposed : {false, true})
        for (bool relu : {false, true}) {
          INFO(DataTypeName(dtype) << " " << M << "x" << K << "x" << N << (transposed ? " transposed" : "")
                                   << (relu ? " relu" : ""));
          const auto x = Rounded(RandomVec(M * K, 1)), w = Rounded(RandomVec(N * K, 2, -0.2f, 0.2f)),
                     b = Rounded(RandomVec(N, 3));
          std::vector<double> want(M * N);
          for (int64_t m = 0; m < M; ++m)
            for (int64_t n = 0; n < N; ++n) {
              double s = b[n];
              for (int64_t k = 0; k < K; ++k) s += double(x[m * K + k]) * (transposed ? w[k * N + n] : w[n * K + k]);
              want[m * N + n] = relu ? std::max(s, 0.0) : s;
            }
          Workspace ws;
          FeedAs(ws, "X", {M, K}, x, dtype);
          FeedAs(ws, "W", transposed ? std::vector<int64_t>{K, N} : std::vector<int64_t>{N, K}, w, dtype);
          FeedAs(ws, "b", {N}, b, dtype);
          std::vector<caffe2::Argument> args;
          if (relu) args.push_back(ArgS("fused_activation", "Relu"));
          auto def = MakeOp(transposed ? "FCTransposed" : "FC", {"X", "W", "b"}, {"Y"}, args);
          def.set_engine("DNNL");
          auto op = CreateOperator(def, &ws);
          // Parts, one primitive, parts again (cached plans), more threads than the bands' rows.
          for (int threads : {2, 1, 3, 2, 8}) {
            INFO(threads << " threads");
            ScopedIntraOpThreads team(threads);
            op->Run();
            const Tensor& y = ws.GetBlobOrThrow("Y").GetTensor();
            REQUIRE(y.dtype() == dtype);
            REQUIRE(y.shape() == std::vector<int64_t>{M, N});
            // float32 accumulation; bfloat16 output rounding is 2^-8 relative.
            CHECK(Worst(Values(y), want).error < (dtype == DataType::Float ? 1e-4 : 1.0 / 128));
          }
        }
  }
}
