// Engine GLOO on GPU tensors (operators/communicator_op_gloo_cuda.cc: staged through pinned host
// memory): 2 ranks as threads on CUDA:0 over an in-process store. Every collective on GPU blobs
// equals the same op's CPU kernel on CPU copies of the blobs and the analytic value; inside simple
// and DAG nets the staged Allreduce reads its GPU producer's output and its GPU consumer reads its
// result, run after run, also after a size change.
// [gpu][gloo] cases WARN "skipped" and return without a CUDA device (or without Gloo). The kernels
// were written and compiled on a machine without a GPU: until these cases have run on one, the
// staging code is UNVERIFIED. Registration is checked without a GPU in test_gloo_collectives.cc.
#include <catch2/catch.hpp>

#include "gloo_test_util.h"

namespace hetnet {

using namespace glootest;

#if HETNET_WITH_GLOO
namespace {

const Device kGpu = Device::CUDA(0);

// A host tensor of n values base + step * i (no Catch2 macros: rank threads call it).
Tensor HostValues(DataType dt, int64_t n, double base, double step) {
  Tensor t({n}, dt);
  for (int64_t i = 0; i < n; ++i) {
    const double v = base + step * static_cast<double>(i);
    switch (dt) {
      case DataType::Float: t.mutable_data<float>()[i] = static_cast<float>(v); break;
      case DataType::Float16: t.mutable_data<Half>()[i] = FloatToHalf(static_cast<float>(v)); break;
      case DataType::Int32: t.mutable_data<int32_t>()[i] = static_cast<int32_t>(v); break;
      case DataType::Int64: t.mutable_data<int64_t>()[i] = static_cast<int64_t>(v); break;
      default: throw std::logic_error("HostValues: unhandled dtype");
    }
  }
  return t;
}

// `name` on the GPU and `name`_cpu on CPU, with the same values.
void FeedBoth(Workspace& ws, const std::string& name, const Tensor& t) {
  Feed(ws, name, t, kGpu);
  Feed(ws, name + "_cpu", t);
}

std::vector<std::string> Suffixed(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& n : names) out.push_back(n == "cw" ? n : n + "_cpu");
  return out;
}

// Runs `type` with engine GLOO on the GPU blobs (on CUDA:0) and on their _cpu copies (on CPU).
void RunBoth(Workspace& ws, const std::string& type, const std::vector<std::string>& in,
             const std::vector<std::string>& out, const std::vector<caffe2::Argument>& args = {}) {
  ws.RunOperatorOnce(Gloo(MakeOp(type, in, out, args, kGpu)));
  ws.RunOperatorOnce(Gloo(MakeOp(type, Suffixed(in), Suffixed(out), args)));
}

// The GPU blob lives on the GPU and equals its CPU twin (the CPU kernel's result) and `want(i)`.
template <class Want>
void ExpectBoth(Workspace& ws, RankResult& res, const std::string& what, const std::string& name, Want want) {
  const Tensor& t = ws.GetBlobOrThrow(name).GetTensor();
  if (t.device() != kGpu && res.mismatch.empty()) res.mismatch = what + ": result left the GPU: " + t.DebugString();
  const auto gpu = Values(ws, name), cpu = Values(ws, name + "_cpu");
  if (gpu.size() != cpu.size() && res.mismatch.empty())
    res.mismatch = what + ": " + std::to_string(gpu.size()) + " elements on the GPU, " + std::to_string(cpu.size()) +
                   " on CPU";
  for (size_t i = 0; i < gpu.size() && i < cpu.size(); ++i) {
    Expect(res, what + " (GPU vs CPU kernel)", gpu[i], cpu[i]);
    Expect(res, what, gpu[i], want(static_cast<int64_t>(i)));
  }
}

}  // namespace
#endif

TEST_CASE("GPU: GLOO collectives on GPU tensors equal the CPU kernel and the analytic value (2 ranks)",
          "[gpu][gloo]") {
  if (optest::SkipWithoutGpu()) return;
#if !HETNET_WITH_GLOO
  WARN("skipped: this build has no Gloo");
#else
  const int size = 2;
  const double tri = 1;  // sum of ranks
  auto results = RunRanks(size, [&](int r, Workspace& ws, RankResult& res) {
    // The common world made by the CUDA kernel (it runs the CPU one): a host object.
    ws.RunOperatorOnce(Gloo(MakeOp("CreateCommonWorld", {"store"}, {"cw"},
                                   {ArgI("rank", r), ArgI("size", size), ArgI("timeout_ms", 10000)}, kGpu),
                            "cw_op"));
    const int64_t n = 37;
    for (DataType dt : {DataType::Float, DataType::Float16, DataType::Int32, DataType::Int64}) {
      const std::string d = DataTypeName(dt);
      FeedBoth(ws, "x1", HostValues(dt, n, r, 1));
      FeedBoth(ws, "x2", HostValues(dt, n, r + 100, 1));
      RunBoth(ws, "Allreduce", {"cw", "x1", "x2"}, {"x1", "x2"});
      for (const char* b : {"x1", "x2"})
        ExpectBoth(ws, res, "Allreduce " + d, b, [&](int64_t i) { return 2 * tri + size * (100 + 2.0 * i); });
      FeedBoth(ws, "y1", HostValues(dt, n, r * 1000, 1));
      FeedBoth(ws, "y2", HostValues(dt, n, -5, 0));
      RunBoth(ws, "Broadcast", {"cw", "y1", "y2"}, {"y1", "y2"}, {ArgI("root", 1)});
      for (const char* b : {"y1", "y2"})
        ExpectBoth(ws, res, "Broadcast " + d, b, [&](int64_t i) { return 1000.0 + i; });
      FeedBoth(ws, "g1", HostValues(dt, 3, r * 10, 1));
      FeedBoth(ws, "g2", HostValues(dt, 3, r * 10 + 5, 1));
      RunBoth(ws, "Allgather", {"cw", "g1", "g2"}, {"gathered"});
      if (Fetch(ws, "gathered").ndim() != 1) res.mismatch = "Allgather output is not 1-D";
      // Rank-major, then input index: element q * 6 + k * 3 + i is rank q's input k, element i.
      ExpectBoth(ws, res, "Allgather " + d, "gathered",
                 [](int64_t e) { return (e / 6) * 10.0 + ((e % 6) / 3) * 5.0 + e % 3; });
    }
    // Reduce to rank 1 (its Y only is defined), ReduceScatter with uneven counts on the GPU.
    FeedBoth(ws, "rx", HostValues(DataType::Float, n, r, 0.5));
    RunBoth(ws, "Reduce", {"cw", "rx"}, {"ry"}, {ArgI("root", 1)});
    if (r == 1) ExpectBoth(ws, res, "Reduce", "ry", [&](int64_t i) { return tri + size * 0.5 * i; });
    Tensor counts({size}, DataType::Int32);
    counts.mutable_data<int32_t>()[0] = 2;
    counts.mutable_data<int32_t>()[1] = 3;
    FeedBoth(ws, "counts", counts);
    FeedBoth(ws, "s1", HostValues(DataType::Float, 5, r, 1));
    RunBoth(ws, "ReduceScatter", {"cw", "s1", "counts"}, {"s1", "counts"});
    const auto s = Values(ws, "s1");
    // Rank r's segment of the sum lands at the front of its output (as Gloo's algorithm left it for Caffe2).
    for (int64_t i = r == 0 ? 0 : 2; i < (r == 0 ? 2 : 5); ++i)
      Expect(res, "ReduceScatter", s[i - (r == 0 ? 0 : 2)], tri + size * i);
    // A clone made by the CUDA kernel; Barrier and Allreduce on it; Destroy placed on the GPU
    // falls back to CPU (no CUDA kernel of any engine).
    ws.RunOperatorOnce(Gloo(MakeOp("CloneCommonWorld", {"cw"}, {"cw2"}, {}, kGpu), "clone_op"));
    ws.RunOperatorOnce(Gloo(MakeOp("Barrier", {"cw2"}, {}, {}, kGpu)));
    Feed(ws, "c", HostValues(DataType::Float, 4, r, 0), kGpu);
    ws.RunOperatorOnce(Gloo(MakeOp("Allreduce", {"cw2", "c"}, {"c"}, {}, kGpu)));
    for (double v : Values(ws, "c")) Expect(res, "Allreduce on a clone", v, tri);
    ws.RunOperatorOnce(Gloo(MakeOp("DestroyCommonWorld", {"cw2"}, {"cw2"}, {}, kGpu)));
    ws.RunOperatorOnce(Gloo(MakeOp("Barrier", {"cw"}, {})));
  });
  RequireAllOk(results);
#endif
}

TEST_CASE("GPU: a staged GLOO Allreduce in a net orders after its GPU producer and before its GPU consumer",
          "[gpu][gloo]") {
  if (optest::SkipWithoutGpu()) return;
#if !HETNET_WITH_GLOO
  WARN("skipped: this build has no Gloo");
#else
  auto results = RunRanks(2, [&](int r, Workspace& ws, RankResult& res) {
    CreateWorld(ws, r, 2);
    for (const char* type : {"simple", "dag"}) {
      caffe2::NetDef net;
      net.set_name(std::string("staged_") + type);
      net.set_type(type);
      net.set_num_workers(4);  // dag: the three ops may run on three threads, so on three streams
      *net.add_op() = MakeOp("Scale", {"x"}, {"s"}, {ArgF("scale", 2.f)}, kGpu);
      *net.add_op() = Gloo(MakeOp("Allreduce", {"cw", "s"}, {"s"}, {}, kGpu));
      *net.add_op() = MakeOp("Scale", {"s"}, {"t"}, {ArgF("scale", 0.5f)}, kGpu);
      // Large enough that an unordered copy would read the producer's output before it exists; the
      // second size makes the staging tensors grow and the CPU kernel rebind.
      for (int64_t m : {int64_t(1) << 20, (int64_t(1) << 20) + 4099}) {
        for (int run = 0; run < 3; ++run) {
          // x[i] = r + run + (i % 1000): t = sum over ranks of x = 1 + 2 * (run + i % 1000), exact in float.
          Tensor x({m}, DataType::Float);
          for (int64_t i = 0; i < m; ++i) x.mutable_data<float>()[i] = static_cast<float>(r + run + i % 1000);
          Feed(ws, "x", x, kGpu);
          if (run == 0 && m == (int64_t(1) << 20)) ws.CreateNet(net, /*overwrite=*/true);
          ws.RunNet(net.name());
          const auto t = Values(ws, "t");
          if (static_cast<int64_t>(t.size()) != m) res.mismatch = std::string(type) + ": wrong size";
          for (int64_t i = 0; i < m && res.mismatch.empty(); i += 1 + i % 7)
            Expect(res, std::string(type) + " net, run " + std::to_string(run), t[i], 1 + 2.0 * (run + i % 1000));
        }
      }
    }
  });
  RequireAllOk(results);
#endif
}

}  // namespace hetnet
