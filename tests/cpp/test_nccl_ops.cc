// NCCL operators (NCCLAllreduce, NCCLBroadcast, NCCLReduce, NCCLAllGather, NCCLReduceScatter) and
// the NCCL engine of the communicator ops (CreateCommonWorld/Allreduce/... engine "NCCL").
//
// [nccl] cases run anywhere: schemas (counts, in-place rules, shapes, devices, no gradient) and the
// clear error a CPU-only machine gives. [gpu][nccl] cases WARN "skipped" and return without a CUDA
// device; they never pass vacuously under `hetnet_tests --require-gpu "[gpu]"` (tools/gpu_suite.sh),
// which reports the whole run as skipped on such a machine. The kernels were written and compiled on
// a machine without a GPU: until these [gpu] cases have run on one, the NCCL code is UNVERIFIED.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>

#include "core/half.h"
#include "device/collectives/memory_store_handler.h"
#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {


void FeedStore(Workspace& ws, const std::string& name, StoreHandlerPtr store) {
  ws.CreateBlob(name)->Reset(std::make_shared<StoreHandlerPtr>(std::move(store)));
}

// Runs def and returns the hetnet::Error it threw (FAILs when it did not throw).
Error ErrorOf(Workspace& ws, const caffe2::OperatorDef& def) {
  try {
    RunOp(ws, def);
  } catch (const Error& e) {
    return e;
  }
  FAIL("expected " << def.type() << " to throw");
  return Error(ErrorKind::kRuntime, "unreachable");
}

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// One CHECK per vector (the net case compares millions of elements): the first mismatch, if any.
void CheckNear(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
  REQUIRE(got.size() == want.size());
  size_t bad = got.size();
  for (size_t k = 0; k < got.size() && bad == got.size(); ++k)
    if (!(std::fabs(got[k] - want[k]) <= tol * (1.f + std::fabs(want[k])))) bad = k;
  INFO("first mismatch at " << bad << ": got " << (bad < got.size() ? got[bad] : 0.f) << ", want "
                            << (bad < got.size() ? want[bad] : 0.f));
  CHECK(bad == got.size());
}

caffe2::OperatorDef CreateWorldOp(const std::string& name, int size, int rank, int device, int64_t timeout_ms) {
  auto def = MakeOp("CreateCommonWorld", {"store"}, {"cw"},
                    {ArgI("size", size), ArgI("rank", rank), ArgI("timeout_ms", timeout_ms)}, Device::CUDA(device));
  def.set_name(name);
  def.set_engine("NCCL");
  return def;
}

caffe2::OperatorDef Engine(caffe2::OperatorDef def, const std::string& engine) {
  def.set_engine(engine);
  return def;
}

}  // namespace

TEST_CASE("NCCL ops: schemas (counts, in-place rules, shapes, devices, no gradient)", "[nccl]") {
#ifndef HETNET_WITH_NCCL
  WARN("skipped: this build has no NCCL (HETNET_WITH_NCCL unset), so the NCCL ops are not registered");
  return;
#else
  for (const char* t : {"NCCLAllreduce", "NCCLBroadcast", "NCCLReduce", "NCCLAllGather", "NCCLReduceScatter"}) {
    INFO(t);
    const OpSchema* s = OpSchemaRegistry::Find(t);
    REQUIRE(s);
    CHECK(GradientRegistry::HasNoGradient(t));
    CHECK(OperatorRegistry::Find(t, DeviceType::CUDA, "") != nullptr);  // no engine, as Caffe2
    CHECK(OperatorRegistry::Find(t, DeviceType::CPU, "") == nullptr);
    CHECK_THROWS_WITH(s->Verify(MakeOp(t, {}, {"y"})), Catch::Contains("input(s)"));
    std::vector<std::string> many;
    for (int i = 0; i < 17; ++i) many.push_back("x" + std::to_string(i));
    CHECK_THROWS_WITH(s->Verify(MakeOp(t, many, {"y"})), Catch::Contains("between 1 and 16"));
    // Device inference: input i on GPU i (the list index, as Caffe2's ncclOpDevInfer).
    auto devs = s->InferDevices(MakeOp(t, {"a", "b", "c"}, {"a", "b", "c"}), Device::CUDA(0));
    REQUIRE(devs.first.size() == 3);
    for (int i = 0; i < 3; ++i) CHECK(devs.first[i] == Device::CUDA(i));
  }
  // N->1 (reduce) versus N->N.
  const OpSchema* reduce = OpSchemaRegistry::Find("NCCLReduce");
  CHECK_NOTHROW(reduce->Verify(MakeOp("NCCLReduce", {"a", "b"}, {"y"})));
  CHECK_THROWS_WITH(reduce->Verify(MakeOp("NCCLReduce", {"a", "b"}, {"y", "z"})), Catch::Contains("produces 1 output"));
  CHECK_NOTHROW(reduce->Verify(MakeOp("NCCLReduce", {"a", "b"}, {"a"})));  // output may share an input
  auto rdev = reduce->InferDevices(MakeOp("NCCLReduce", {"a", "b", "c"}, {"y"}, {ArgI("root", 2)}), Device::CUDA(0));
  CHECK(rdev.second.at(0) == Device::CUDA(2));  // the root's GPU
  CHECK_NOTHROW(OpSchemaRegistry::Find("NCCLAllreduce")->Verify(MakeOp("NCCLAllreduce", {"a", "b"}, {"a", "b"})));
  CHECK_NOTHROW(OpSchemaRegistry::Find("NCCLAllreduce")->Verify(MakeOp("NCCLAllreduce", {"a", "b"}, {"y", "z"})));
  // Broadcast is enforced in place; AllGather and ReduceScatter may not run in place.
  CHECK_NOTHROW(OpSchemaRegistry::Find("NCCLBroadcast")->Verify(MakeOp("NCCLBroadcast", {"a", "b"}, {"a", "b"})));
  CHECK_THROWS_WITH(OpSchemaRegistry::Find("NCCLBroadcast")->Verify(MakeOp("NCCLBroadcast", {"a", "b"}, {"a", "z"})),
                    Catch::Contains("must run in place"));
  for (const char* t : {"NCCLAllGather", "NCCLReduceScatter"})
    CHECK_THROWS_WITH(OpSchemaRegistry::Find(t)->Verify(MakeOp(t, {"a", "b"}, {"a", "z"})),
                      Catch::Contains("cannot run in place"));
  // Shapes: AllGather [n, *src], ReduceScatter src[1:], Allreduce like its input.
  const std::vector<TensorInfo> two{TensorInfo::Of({2, 3}, DataType::Float), TensorInfo::Of({2, 3}, DataType::Float)};
  auto g = OpSchemaRegistry::Find("NCCLAllGather")->InferShapes(MakeOp("NCCLAllGather", {"a", "b"}, {"y", "z"}), two);
  CHECK(g.at(1).dims == std::vector<int64_t>{2, 2, 3});
  auto rs = OpSchemaRegistry::Find("NCCLReduceScatter")
                ->InferShapes(MakeOp("NCCLReduceScatter", {"a", "b"}, {"y", "z"}), two);
  CHECK(rs.at(0).dims == std::vector<int64_t>{3});
  auto ar = OpSchemaRegistry::Find("NCCLAllreduce")->InferShapes(MakeOp("NCCLAllreduce", {"a", "b"}, {"y", "z"}), two);
  CHECK(ar.at(1).dims == std::vector<int64_t>{2, 3});
  // The communicator ops' NCCL engine kernels are registered for CUDA.
  for (const char* t : {"CreateCommonWorld", "Allreduce", "Broadcast", "Allgather", "ReduceScatter"})
    CHECK(OperatorRegistry::Find(t, DeviceType::CUDA, "NCCL") != nullptr);
#endif
}

TEST_CASE("NCCL ops: a machine or device without the GPU gives a clear error, not a crash", "[nccl]") {
  Workspace ws;
  Feed<float>(ws, "x", {2}, {1.f, 2.f});
  // On a CPU device option there is no kernel (the op type is known where NCCL is built).
  const Error cpu = ErrorOf(ws, MakeOp("NCCLAllreduce", {"x"}, {"x"}));
  CHECK(Contains(cpu.what(), "NCCLAllreduce"));
  CHECK(cpu.kind() == ErrorKind::kNotFound);
  // A GPU that this machine does not have.
  const int gpus = NumCudaDevices();
  const Error missing = ErrorOf(ws, MakeOp("NCCLAllreduce", {"x"}, {"x"}, {}, Device::CUDA(gpus)));
  INFO(missing.what());
  CHECK(Contains(missing.what(), Device::CUDA(gpus).str()));
  CHECK((missing.kind() == ErrorKind::kUnsupported || missing.kind() == ErrorKind::kNotFound));
  FeedStore(ws, "store", std::make_shared<MemoryStoreHandler>());
  const Error world = ErrorOf(ws, CreateWorldOp("cw_missing", 1, 0, gpus, 1000));
  CHECK(Contains(world.what(), Device::CUDA(gpus).str()));
}

TEST_CASE("GPU: NCCL ops with one input: no-op (or a copy), ReduceScatter through a 1-GPU communicator",
          "[gpu][nccl]") {
  if (SkipWithoutGpu()) return;
#ifndef HETNET_WITH_NCCL
  WARN("skipped: this build has no NCCL");
  return;
#else
  const Device g0 = Device::CUDA(0);
  const std::vector<float> x = RandomVec(6, 1);
  Workspace ws;
  Feed(ws, "x", HostTensor<float>({2, 3}, x), g0);
  RunOp(ws, MakeOp("NCCLAllreduce", {"x"}, {"x"}, {}, g0));
  CheckNear(FetchVec<float>(ws, "x"), x, 0);
  RunOp(ws, MakeOp("NCCLAllreduce", {"x"}, {"y"}, {}, g0));
  CheckNear(FetchVec<float>(ws, "y"), x, 0);
  RunOp(ws, MakeOp("NCCLBroadcast", {"x"}, {"x"}, {}, g0));
  CheckNear(FetchVec<float>(ws, "x"), x, 0);
  RunOp(ws, MakeOp("NCCLReduce", {"x"}, {"r"}, {}, g0));
  CheckNear(FetchVec<float>(ws, "r"), x, 0);
  RunOp(ws, MakeOp("NCCLAllGather", {"x"}, {"g"}, {}, g0));
  CHECK(Fetch(ws, "g").shape() == std::vector<int64_t>{1, 2, 3});
  CheckNear(FetchVec<float>(ws, "g"), x, 0);
  Feed(ws, "s", HostTensor<float>({1, 6}, x), g0);
  auto op = CreateOperator(MakeOp("NCCLReduceScatter", {"s"}, {"t"}, {}, g0), &ws);
  for (int run = 0; run < 2; ++run) {  // the second run reuses the op's communicator
    op->Run();
    op->Finish();
    CHECK(Fetch(ws, "t").shape() == std::vector<int64_t>{6});
    CheckNear(FetchVec<float>(ws, "t"), x, 0);
  }
  const Error shape = ErrorOf(ws, MakeOp("NCCLReduceScatter", {"x"}, {"t"}, {}, g0));  // [2, 3] for one GPU
  CHECK(Contains(shape.what(), "[1, ...]"));
#endif
}

TEST_CASE("GPU: NCCL ops refuse dtypes other than float32 and float16, naming the op", "[gpu][nccl]") {
  if (SkipWithoutGpu()) return;
#ifndef HETNET_WITH_NCCL
  WARN("skipped: this build has no NCCL");
  return;
#else
  const Device g0 = Device::CUDA(0);
  Workspace ws;
  Feed<int32_t>(ws, "i", {3}, {1, 2, 3}, g0);
  for (const char* t : {"NCCLAllreduce", "NCCLReduceScatter", "NCCLAllGather"}) {
    const Error e = ErrorOf(ws, MakeOp(t, {"i"}, {"o"}, {}, g0));
    INFO(e.what());
    CHECK(Contains(e.what(), t));
    CHECK(Contains(e.what(), "int32"));
    CHECK(e.kind() == ErrorKind::kUnsupported);
  }
  Feed<float>(ws, "c", {2}, {1.f, 2.f});  // a CPU tensor
  CHECK(Contains(ErrorOf(ws, MakeOp("NCCLAllreduce", {"c"}, {"c"}, {}, g0)).what(), "GPU tensor"));
  // float16 goes through NCCL (a 1-GPU ReduceScatter).
  Tensor h({1, 4}, DataType::Float16);
  for (int k = 0; k < 4; ++k) h.mutable_data<Half>()[k] = FloatToHalf(0.5f * k);
  Feed(ws, "h", h, g0);
  RunOp(ws, MakeOp("NCCLReduceScatter", {"h"}, {"ho"}, {}, g0));
  Tensor out = Fetch(ws, "ho");
  REQUIRE(out.dtype() == DataType::Float16);
  for (int k = 0; k < 4; ++k) CHECK(HalfToFloat(out.data<Half>()[k]) == 0.5f * k);
#endif
}

TEST_CASE("GPU: NCCL ops over every GPU equal a CPU reference", "[gpu][nccl]") {
  if (SkipWithoutGpu()) return;
#ifndef HETNET_WITH_NCCL
  WARN("skipped: this build has no NCCL");
  return;
#else
  const int n = std::min(NumCudaDevices(), 4);
  if (n < 2) {
    WARN("skipped: the multi-GPU NCCL cases need 2 GPUs, this machine has " << n);
    return;
  }
  const int64_t m = 5;
  Workspace ws;
  std::vector<std::vector<float>> x(n);
  std::vector<std::string> in, out, in2;
  std::vector<float> sum(m * n, 0.f);
  for (int i = 0; i < n; ++i) {
    x[i] = RandomVec(m * n, 10 + i);
    for (int64_t k = 0; k < m * n; ++k) sum[k] += x[i][k];
    in.push_back("x" + std::to_string(i));
    out.push_back("y" + std::to_string(i));
    Feed(ws, in.back(), HostTensor<float>({n, m}, x[i]), Device::CUDA(i));
  }
  const Device g0 = Device::CUDA(0);
  for (int run = 0; run < 2; ++run) {
    RunOp(ws, MakeOp("NCCLAllreduce", in, out, {}, g0));
    for (int i = 0; i < n; ++i) {
      CHECK(ws.GetBlobOrThrow(out[i]).GetTensor().device() == Device::CUDA(i));
      CheckNear(FetchVec<float>(ws, out[i]), sum);
    }
  }
  RunOp(ws, MakeOp("NCCLReduce", in, {"r"}, {ArgI("root", 1)}, g0));
  CHECK(ws.GetBlobOrThrow("r").GetTensor().device() == Device::CUDA(1));
  CheckNear(FetchVec<float>(ws, "r"), sum);
  RunOp(ws, MakeOp("NCCLAllGather", in, out, {}, g0));
  std::vector<float> stacked;
  for (int i = 0; i < n; ++i) stacked.insert(stacked.end(), x[i].begin(), x[i].end());
  for (int i = 0; i < n; ++i) {
    CHECK(Fetch(ws, out[i]).shape() == std::vector<int64_t>{n, n, m});
    CheckNear(FetchVec<float>(ws, out[i]), stacked, 0);
  }
  RunOp(ws, MakeOp("NCCLReduceScatter", in, out, {}, g0));
  for (int i = 0; i < n; ++i) {
    CHECK(Fetch(ws, out[i]).shape() == std::vector<int64_t>{m});
    CheckNear(FetchVec<float>(ws, out[i]), std::vector<float>(sum.begin() + i * m, sum.begin() + (i + 1) * m));
  }
  RunOp(ws, MakeOp("NCCLBroadcast", in, in, {ArgI("root", 1)}, g0));
  for (int i = 0; i < n; ++i) CheckNear(FetchVec<float>(ws, in[i]), x[1], 0);
  // Two inputs on one GPU are refused before NCCL sees them.
  Feed(ws, "dup", HostTensor<float>({n, m}, x[0]), Device::CUDA(0));
  const Error dup = ErrorOf(ws, MakeOp("NCCLAllreduce", {"x0", "dup"}, {"x0", "dup"}, {}, g0));
  CHECK(Contains(dup.what(), "both on cuda:0"));
#endif
}

TEST_CASE("GPU: a 1-rank NCCL common world: Allreduce/Broadcast/Allgather/ReduceScatter keep or gather the input",
          "[gpu][nccl]") {
  if (SkipWithoutGpu()) return;
#ifndef HETNET_WITH_NCCL
  WARN("skipped: this build has no NCCL");
  return;
#else
  const Device g0 = Device::CUDA(0);
  Workspace ws;
  FeedStore(ws, "store", std::make_shared<MemoryStoreHandler>());
  RunOp(ws, CreateWorldOp("cw_one", 1, 0, 0, 10000));
  const std::vector<float> a = RandomVec(8, 3), b = RandomVec(8, 4);
  Feed(ws, "a", HostTensor<float>({8}, a), g0);
  RunOp(ws, Engine(MakeOp("Allreduce", {"cw", "a"}, {"a"}, {}, g0), "NCCL"));
  CheckNear(FetchVec<float>(ws, "a"), a, 0);
  // Two local tensors: both become their sum (the local tensors are reduced too, as GLOO does).
  Feed(ws, "b", HostTensor<float>({8}, b), g0);
  RunOp(ws, Engine(MakeOp("Allreduce", {"cw", "a", "b"}, {"a", "b"}, {}, g0), "NCCL"));
  std::vector<float> ab(8);
  for (int k = 0; k < 8; ++k) ab[k] = a[k] + b[k];
  CheckNear(FetchVec<float>(ws, "a"), ab);
  CheckNear(FetchVec<float>(ws, "b"), ab);
  Feed(ws, "a", HostTensor<float>({8}, a), g0);
  RunOp(ws, Engine(MakeOp("Broadcast", {"cw", "a", "b"}, {"a", "b"}, {}, g0), "NCCL"));
  CheckNear(FetchVec<float>(ws, "b"), a, 0);
  RunOp(ws, Engine(MakeOp("Allgather", {"cw", "a", "b"}, {"g"}, {}, g0), "NCCL"));
  CHECK(Fetch(ws, "g").shape() == std::vector<int64_t>{16});
  Feed<int32_t>(ws, "counts", {1}, {8});
  RunOp(ws, Engine(MakeOp("ReduceScatter", {"cw", "a", "counts"}, {"a", "counts"}, {}, g0), "NCCL"));
  CheckNear(FetchVec<float>(ws, "a"), a, 0);
  Feed<int32_t>(ws, "i", {2}, {1, 2}, g0);  // one local tensor: any dtype NCCL sums
  RunOp(ws, Engine(MakeOp("Allreduce", {"cw", "i"}, {"i"}, {}, g0), "NCCL"));
  CHECK(FetchVec<int32_t>(ws, "i") == std::vector<int32_t>{1, 2});
  Feed<uint8_t>(ws, "u", {2}, {1, 2}, g0);
  CHECK(Contains(ErrorOf(ws, Engine(MakeOp("Allreduce", {"cw", "u"}, {"u"}, {}, g0), "NCCL")).what(), "Unhandled type"));
  // After DestroyCommonWorld the world refuses collectives (kIo).
  RunOp(ws, Engine(MakeOp("DestroyCommonWorld", {"cw"}, {"cw"}), "NCCL"));
  const Error closed = ErrorOf(ws, Engine(MakeOp("Allreduce", {"cw", "a"}, {"a"}, {}, g0), "NCCL"));
  CHECK(closed.kind() == ErrorKind::kIo);
  CHECK(Contains(closed.what(), "closed"));
#endif
}

TEST_CASE("GPU: NCCL common world: two ranks on one GPU are refused; a missing peer times out", "[gpu][nccl]") {
  if (SkipWithoutGpu()) return;
#ifndef HETNET_WITH_NCCL
  WARN("skipped: this build has no NCCL");
  return;
#else
  auto store = std::make_shared<MemoryStoreHandler>();
  auto rank = [&](int r) {
    Workspace ws;
    FeedStore(ws, "store", store);
    try {
      RunOp(ws, CreateWorldOp("cw_shared_gpu", 2, r, 0, 5000));
    } catch (const Error& e) {
      return std::make_pair(e.kind(), std::string(e.what()));
    }
    return std::make_pair(ErrorKind::kRuntime, std::string("no error"));
  };
  auto r0 = std::async(std::launch::async, rank, 0);
  auto r1 = std::async(std::launch::async, rank, 1);
  REQUIRE(r0.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  REQUIRE(r1.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  for (auto* f : {&r0, &r1}) {
    const auto got = f->get();
    INFO(got.second);
    CHECK(got.first == ErrorKind::kInvalidArgument);
    CHECK(Contains(got.second, "same GPU"));
  }
  // Rank 0 of 2 alone: the rendezvous ends at timeout_ms with kTimeout, never hangs.
  Workspace ws;
  FeedStore(ws, "store", std::make_shared<MemoryStoreHandler>());
  const auto t0 = std::chrono::steady_clock::now();
  const Error late = ErrorOf(ws, CreateWorldOp("cw_alone", 2, 0, 0, 500));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(late.what());
  CHECK(late.kind() == ErrorKind::kTimeout);
  CHECK(s < 10);
#endif
}

TEST_CASE("GPU: NCCLAllreduce inside a net orders after each GPU's producers and before its consumers",
          "[gpu][nccl]") {
  if (SkipWithoutGpu()) return;
#ifndef HETNET_WITH_NCCL
  WARN("skipped: this build has no NCCL");
  return;
#else
  const int n = std::min(NumCudaDevices(), 4);
  if (n < 2) {
    WARN("skipped: needs 2 GPUs, this machine has " << n);
    return;
  }
  // Large enough that an unordered collective would read the producers' output before it exists.
  const int64_t m = 1 << 20;
  for (const char* type : {"simple", "dag"}) {
    INFO(type);
    Workspace ws;
    caffe2::NetDef net;
    net.set_name(std::string("nccl_in_") + type);
    net.set_type(type);
    std::vector<std::string> s;
    std::vector<float> sum(m, 0.f);
    for (int i = 0; i < n; ++i) {
      const std::string x = "x" + std::to_string(i);
      const std::vector<float> v = RandomVec(m, 20 + i);
      for (int64_t k = 0; k < m; ++k) sum[k] += 2.f * v[k];
      Feed(ws, x, HostTensor<float>({m}, v), Device::CUDA(i));
      s.push_back("s" + std::to_string(i));
      *net.add_op() = MakeOp("Scale", {x}, {s.back()}, {ArgF("scale", 2.f)}, Device::CUDA(i));
    }
    *net.add_op() = MakeOp("NCCLAllreduce", s, s, {}, Device::CUDA(0));
    for (int i = 0; i < n; ++i)
      *net.add_op() = MakeOp("Scale", {s[i]}, {"t" + std::to_string(i)}, {ArgF("scale", 1.f)}, Device::CUDA(i));
    for (int run = 0; run < 3; ++run) {
      ws.RunNetOnce(net);
      for (int i = 0; i < n; ++i) CheckNear(FetchVec<float>(ws, "t" + std::to_string(i)), sum, 1e-4f);
    }
  }
#endif
}
