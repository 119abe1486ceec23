// Communicator ops with engine GLOO: N ranks as threads, each with its own Workspace, over real
// loopback TCP pairs and an in-process store. Every collective and dtype, rebinding after size
// changes, errors (bad args, a rank that never joins, a peer that stops taking part, status_blob),
// and the DAG executor's ordering of ops that share a common world.
#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include "core/half.h"
#include "core/net.h"
#include "device/collectives/store_handler.h"
#include "net_executors/dag_graph.h"
#include "operators/communicator_op.h"
#include "op_test_util.h"

#if HETNET_WITH_GLOO
#include "device/collectives/gloo_common_world.h"
#endif

namespace hetnet {
namespace {

using namespace optest;
using Clock = std::chrono::steady_clock;

// A StoreHandler in memory, shared by the rank threads of one test.
class InProcessStore final : public StoreHandler {
 public:
  void Set(const std::string& name, const std::string& data) override {
    std::lock_guard<std::mutex> lock(mu_);
    kv_[name] = data;
    cv_.notify_all();
  }
  std::string Get(const std::string& name, std::chrono::milliseconds timeout) override {
    Wait({name}, timeout);
    std::lock_guard<std::mutex> lock(mu_);
    return kv_.at(name);
  }
  int64_t Add(const std::string& name, int64_t value) override {
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t v = (kv_.count(name) ? std::stoll(kv_[name]) : 0) + value;
    kv_[name] = std::to_string(v);
    cv_.notify_all();
    return v;
  }
  int64_t GetNumKeys() override {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int64_t>(kv_.size());
  }
  bool DeleteKey(const std::string& name) override {
    std::lock_guard<std::mutex> lock(mu_);
    return kv_.erase(name) > 0;
  }
  bool Check(const std::vector<std::string>& names) override {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& n : names)
      if (!kv_.count(n)) return false;
    return true;
  }
  void Wait(const std::vector<std::string>& names, std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    auto all = [&] {
      for (const auto& n : names)
        if (!kv_.count(n)) return false;
      return true;
    };
    if (timeout.count() == 0) {
      cv_.wait(lock, all);
    } else if (!cv_.wait_for(lock, timeout, all)) {
      HN_THROW(kTimeout, WaitTimeoutMessage(names, *this, timeout));
    }
  }
  std::string Describe() const override { return "in-process test store"; }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::string> kv_;
};

struct RankResult {
  bool ok = true;
  ErrorKind kind = ErrorKind::kRuntime;
  std::string error;     // what() of a thrown error
  std::string mismatch;  // first wrong value seen, "" when all matched
  double seconds = 0;
};

// Runs fn(rank, ws) on `size` threads, each with a Workspace whose blob "store" holds `store`.
template <class Fn>
std::vector<RankResult> RunRanks(int size, Fn fn, StoreHandlerPtr store = std::make_shared<InProcessStore>()) {
  std::vector<RankResult> results(size);
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      const auto t0 = Clock::now();
      Workspace ws;
      ws.CreateBlob("store")->Reset(std::make_shared<StoreHandlerPtr>(store));
      try {
        fn(r, ws, results[r]);
      } catch (const Error& e) {
        results[r].ok = false;
        results[r].kind = e.kind();
        results[r].error = e.what();
      } catch (const std::exception& e) {
        results[r].ok = false;
        results[r].error = std::string("non-hetnet exception: ") + e.what();
      }
      results[r].seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    });
  }
  for (auto& t : threads) t.join();
  return results;
}

caffe2::OperatorDef Gloo(caffe2::OperatorDef def, const std::string& name = "") {
  def.set_engine("GLOO");
  if (!name.empty()) def.set_name(name);
  return def;
}

void CreateWorld(Workspace& ws, int rank, int size, const std::string& cw = "cw", int64_t timeout_ms = 10000,
                 std::vector<caffe2::Argument> extra = {}) {
  std::vector<caffe2::Argument> args = {ArgI("rank", rank), ArgI("size", size), ArgI("timeout_ms", timeout_ms)};
  args.insert(args.end(), extra.begin(), extra.end());
  ws.RunOperatorOnce(Gloo(MakeOp("CreateCommonWorld", {"store"}, {cw}, args), cw + "_op"));
}

template <typename T>
void FeedValues(Workspace& ws, const std::string& name, int64_t n, double base, double step) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(base + step * static_cast<double>(i));
  Feed<T>(ws, name, {n}, v);
}
void FeedHalf(Workspace& ws, const std::string& name, int64_t n, double base, double step) {
  Tensor t({n}, DataType::Float16);
  Half* p = t.mutable_data<Half>();
  for (int64_t i = 0; i < n; ++i) p[i] = FloatToHalf(static_cast<float>(base + step * static_cast<double>(i)));
  Feed(ws, name, t);
}
// Blob values as doubles, whatever the dtype.
std::vector<double> Values(const Workspace& ws, const std::string& name) {
  Tensor t = Fetch(ws, name);
  std::vector<double> out(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) {
    switch (t.dtype()) {
      case DataType::Float: out[i] = t.data<float>()[i]; break;
      case DataType::Double: out[i] = t.data<double>()[i]; break;
      case DataType::Int32: out[i] = t.data<int32_t>()[i]; break;
      case DataType::Int64: out[i] = static_cast<double>(t.data<int64_t>()[i]); break;
      case DataType::Float16: out[i] = HalfToFloat(t.data<Half>()[i]); break;
      default: out[i] = -1e300;
    }
  }
  return out;
}
void Expect(RankResult& res, const std::string& what, double got, double want) {
  if (res.mismatch.empty() && std::abs(got - want) > 1e-6 * std::max(1.0, std::abs(want)))
    res.mismatch = what + ": got " + std::to_string(got) + ", want " + std::to_string(want);
}

void RequireAllOk(const std::vector<RankResult>& results) {
  for (size_t r = 0; r < results.size(); ++r) {
    INFO("rank " << r << ": " << results[r].error << results[r].mismatch);
    REQUIRE(results[r].ok);
    REQUIRE(results[r].mismatch.empty());
  }
}

}  // namespace

TEST_CASE("communicator ops: schemas and the no-default-engine error", "[gloo]") {
  Workspace ws;
  Feed<float>(ws, "x", {2}, {1, 2});
  ws.CreateBlob("cw");
  for (const std::string type : {"Allreduce", "Broadcast", "Allgather", "Barrier", "SendTensor"}) {
    caffe2::OperatorDef def = type == "Barrier" ? MakeOp(type, {"cw"}, {})
                              : type == "Allgather" ? MakeOp(type, {"cw", "x"}, {"y"})
                              : type == "SendTensor" ? MakeOp(type, {"cw", "x"}, {})
                                                     : MakeOp(type, {"cw", "x"}, {"x"});
    try {
      ws.RunOperatorOnce(def);
      FAIL("no error for " << type);
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find("The operator " + type +
                                       " does not have a default engine implementation. Please specify an engine "
                                       "explicitly for this operator.") != std::string::npos);
    }
  }
  // In place is part of the schema.
  CHECK_THROWS_WITH(ws.RunOperatorOnce(Gloo(MakeOp("Allreduce", {"cw", "x"}, {"y"}))),
                    Catch::Contains("must run in place"));
  CHECK_THROWS_WITH(ws.RunOperatorOnce(MakeOp("DestroyCommonWorld", {"cw"}, {"other"})),
                    Catch::Contains("must run in place"));
}

TEST_CASE("dag: communicator ops sharing a common world are chained in net order", "[dag][gloo]") {
  caffe2::NetDef net;
  auto add = [&](const std::string& type, std::vector<std::string> in, std::vector<std::string> out) {
    *net.add_op() = MakeOp(type, in, out);
  };
  add("Allreduce", {"cw", "a"}, {"a"});   // 0
  add("Allreduce", {"cw", "b"}, {"b"});   // 1: after 0 (same world), although it touches other blobs
  add("Allreduce", {"cw2", "c"}, {"c"});  // 2: another world: free
  add("Relu", {"a"}, {"r"});              // 3: after 0 (data)
  add("Broadcast", {"cw", "c"}, {"c"});   // 4: after 1 (world) and 2 (data)
  add("Barrier", {"cw2"}, {});            // 5: after 2 (world)
  add("Barrier", {"cw"}, {});             // 6: after 4
  DagGraph g = BuildDependencyGraph(net);
  CHECK(g.roots == std::vector<int>{0, 2});
  CHECK(g.parents[1] == std::vector<int>{0});
  CHECK(g.parents[3] == std::vector<int>{0});
  CHECK(g.parents[4] == std::vector<int>{1, 2});
  CHECK(g.parents[5] == std::vector<int>{2});
  CHECK(g.parents[6] == std::vector<int>{4});
}

#if HETNET_WITH_GLOO

TEST_CASE("gloo: GPU-device communicator ops have a GLOO kernel that refuses clearly", "[gloo]") {
  // Constructing one needs a GPU (operators/communicator_gpu_op_gloo.cc); here only registration.
  for (const char* type : {"CreateCommonWorld", "Allreduce", "Broadcast", "Reduce", "Allgather", "ReduceScatter",
                           "Barrier", "CloneCommonWorld"})
    CHECK(OperatorRegistry::Find(type, DeviceType::CUDA, "GLOO") != nullptr);
}

TEST_CASE("gloo: every collective and dtype on 2, 3 and 4 ranks", "[gloo]") {
  for (int size : {2, 3, 4}) {
    INFO("world size " << size);
    auto results = RunRanks(size, [&](int r, Workspace& ws, RankResult& res) {
      CreateWorld(ws, r, size);
      const int64_t n = 37;
      const double tri = size * (size - 1) / 2.0;  // sum of ranks
      // Allreduce, two tensors per rank: each ends as the sum over ranks of both.
      for (DataType dt : {DataType::Float, DataType::Float16, DataType::Double, DataType::Int32, DataType::Int64}) {
        for (const char* b : {"x1", "x2"}) {
          const double base = r + (b[1] == '2' ? 100 : 0);
          if (dt == DataType::Float) FeedValues<float>(ws, b, n, base, 1);
          if (dt == DataType::Float16) FeedHalf(ws, b, n, base, 1);
          if (dt == DataType::Double) FeedValues<double>(ws, b, n, base, 1);
          if (dt == DataType::Int32) FeedValues<int32_t>(ws, b, n, base, 1);
          if (dt == DataType::Int64) FeedValues<int64_t>(ws, b, n, base, 1);
        }
        ws.RunOperatorOnce(Gloo(MakeOp("Allreduce", {"cw", "x1", "x2"}, {"x1", "x2"})));
        for (const char* b : {"x1", "x2"}) {
          auto v = Values(ws, b);
          for (int64_t i = 0; i < n; ++i)
            Expect(res, std::string("Allreduce ") + DataTypeName(dt), v[i], 2 * tri + size * (100 + 2.0 * i));
        }
        // Broadcast from the last rank (not for float64: Caffe2's dtypes).
        if (dt == DataType::Double) continue;
        ws.RunOperatorOnce(Gloo(MakeOp("Broadcast", {"cw", "x1", "x2"}, {"x1", "x2"}, {ArgI("root", size - 1)})));
        // Broadcast of freshly fed values: root's x1 is size-1 + i.
        if (dt == DataType::Float) {
          FeedValues<float>(ws, "y1", n, r * 1000, 1);
          FeedValues<float>(ws, "y2", n, -5, 0);
          ws.RunOperatorOnce(Gloo(MakeOp("Broadcast", {"cw", "y1", "y2"}, {"y1", "y2"}, {ArgI("root", size - 1)})));
          for (const char* b : {"y1", "y2"}) {
            auto v = Values(ws, b);
            for (int64_t i = 0; i < n; ++i) Expect(res, "Broadcast", v[i], (size - 1) * 1000.0 + i);
          }
        }
        // Allgather of two inputs: rank-major, then input index.
        if (dt == DataType::Int32) FeedValues<int32_t>(ws, "g1", 3, r * 10, 1);
        if (dt == DataType::Int32) FeedValues<int32_t>(ws, "g2", 3, r * 10 + 5, 1);
        if (dt == DataType::Float16) FeedHalf(ws, "g1", 3, r * 10, 1);
        if (dt == DataType::Float16) FeedHalf(ws, "g2", 3, r * 10 + 5, 1);
        if (dt == DataType::Float) FeedValues<float>(ws, "g1", 3, r * 10, 1);
        if (dt == DataType::Float) FeedValues<float>(ws, "g2", 3, r * 10 + 5, 1);
        if (dt == DataType::Int64) FeedValues<int64_t>(ws, "g1", 3, r * 10, 1);
        if (dt == DataType::Int64) FeedValues<int64_t>(ws, "g2", 3, r * 10 + 5, 1);
        ws.RunOperatorOnce(Gloo(MakeOp("Allgather", {"cw", "g1", "g2"}, {"gathered"})));
        auto g = Values(ws, "gathered");
        if (g.size() != static_cast<size_t>(6 * size)) res.mismatch = "Allgather size " + std::to_string(g.size());
        for (int q = 0; q < size && res.mismatch.empty(); ++q)
          for (int k = 0; k < 2; ++k)
            for (int i = 0; i < 3; ++i) Expect(res, "Allgather", g[q * 6 + k * 3 + i], q * 10 + k * 5 + i);
        if (Fetch(ws, "gathered").ndim() != 1) res.mismatch = "Allgather output is not 1-D";
      }
      // Reduce to rank 1 (beyond Caffe2), float32 and int64.
      FeedValues<float>(ws, "rx", n, r, 0.5);
      ws.RunOperatorOnce(Gloo(MakeOp("Reduce", {"cw", "rx"}, {"ry"}, {ArgI("root", 1)})));
      if (r == 1) {
        auto v = Values(ws, "ry");
        for (int64_t i = 0; i < n; ++i) Expect(res, "Reduce", v[i], tri + size * 0.5 * i);
      }
      FeedValues<int64_t>(ws, "rz", 5, r, 1);
      ws.RunOperatorOnce(Gloo(MakeOp("Reduce", {"cw", "rz"}, {"rz"}, {ArgI("root", 0)})));
      if (r == 0) {
        auto v = Values(ws, "rz");
        for (int64_t i = 0; i < 5; ++i) Expect(res, "Reduce in place", v[i], tri + size * i);
      }
      // ReduceScatter with uneven counts (rank q gets q + 2 elements), two tensors.
      std::vector<int32_t> counts(size);
      int64_t total = 0;
      for (int q = 0; q < size; ++q) total += counts[q] = q + 2;
      Feed<int32_t>(ws, "counts", {size}, counts);
      for (DataType dt : {DataType::Float, DataType::Float16, DataType::Int64}) {
        for (const char* b : {"s1", "s2"}) {
          const double base = r + (b[1] == '2' ? 100 : 0);  // sums stay exact in float16
          if (dt == DataType::Float) FeedValues<float>(ws, b, total, base, 1);
          if (dt == DataType::Float16) FeedHalf(ws, b, total, base, 1);
          if (dt == DataType::Int64) FeedValues<int64_t>(ws, b, total, base, 1);
        }
        ws.RunOperatorOnce(
            Gloo(MakeOp("ReduceScatter", {"cw", "s1", "s2", "counts"}, {"s1", "s2", "counts"})));
        int64_t off = 0;
        for (int q = 0; q < r; ++q) off += counts[q];
        for (const char* b : {"s1", "s2"}) {
          auto v = Values(ws, b);
          for (int64_t i = off; i < off + counts[r]; ++i)
            Expect(res, std::string("ReduceScatter ") + DataTypeName(dt), v[i], 2 * tri + size * (100 + 2.0 * i));
        }
      }
      ws.RunOperatorOnce(Gloo(MakeOp("Barrier", {"cw"}, {})));
      // A clone is an independent world with the same ranks.
      ws.RunOperatorOnce(Gloo(MakeOp("CloneCommonWorld", {"cw"}, {"cw2"}), "clone_op"));
      FeedValues<float>(ws, "c", 4, r, 0);
      ws.RunOperatorOnce(Gloo(MakeOp("Allreduce", {"cw2", "c"}, {"c"})));
      for (double v : Values(ws, "c")) Expect(res, "Allreduce on a clone", v, tri);
      ws.RunOperatorOnce(Gloo(MakeOp("DestroyCommonWorld", {"cw2"}, {"cw2"})));
      ws.RunOperatorOnce(Gloo(MakeOp("Barrier", {"cw"}, {})));
    });
    RequireAllOk(results);
  }
}

TEST_CASE("gloo: kernels rebind when sizes and pointers change (run, then 4 more at a new size)", "[gloo]") {
  auto results = RunRanks(3, [&](int r, Workspace& ws, RankResult& res) {
    CreateWorld(ws, r, 3, "cw", 10000, {ArgI("sync", 1)});  // sync: accepted, no effect (gloo_common_world.h)
    caffe2::NetDef net;
    net.set_name("rebind_" + std::to_string(r));
    *net.add_op() = Gloo(MakeOp("Allreduce", {"cw", "x"}, {"x"}));
    *net.add_op() = Gloo(MakeOp("Broadcast", {"cw", "b"}, {"b"}, {ArgI("root", 2)}));
    *net.add_op() = Gloo(MakeOp("Allgather", {"cw", "b"}, {"g"}));
    FeedValues<float>(ws, "x", 10, r, 1);
    FeedValues<int64_t>(ws, "b", 10, r, 0);
    ws.CreateNet(net);
    ws.RunNet(net.name());
    Expect(res, "first run", Values(ws, "x")[9], 3 + 3 * 9);
    for (int run = 0; run < 4; ++run) {
      const int64_t n = 1000 + 517 * run;  // new storage every run
      FeedValues<float>(ws, "x", n, r + run, 2);
      FeedValues<int64_t>(ws, "b", n, r * 7 + run, 0);
      ws.RunNet(net.name());
      auto x = Values(ws, "x");
      if (static_cast<int64_t>(x.size()) != n) res.mismatch = "size changed";
      for (int64_t i = 0; i < n; i += 97) Expect(res, "rebound Allreduce", x[i], 3 + 3 * run + 6.0 * i);
      Expect(res, "rebound Allreduce last", x[n - 1], 3 + 3 * run + 6.0 * (n - 1));
      for (double v : Values(ws, "b")) Expect(res, "rebound Broadcast", v, 14 + run);
      auto g = Values(ws, "g");
      if (static_cast<int64_t>(g.size()) != 3 * n) res.mismatch = "Allgather size after rebinding";
    }
    // Same sizes again: the bound options are reused, results still right.
    FeedValues<float>(ws, "x", 1000 + 517 * 3, 1, 0);
    ws.RunNet(net.name());
    Expect(res, "unchanged rerun", Values(ws, "x")[5], 3);
  });
  RequireAllOk(results);
}

TEST_CASE("gloo: collectives report bytes, time, peers and algorithm of their last run", "[gloo]") {
  auto results = RunRanks(3, [&](int r, Workspace& ws, RankResult& res) {
    CreateWorld(ws, r, 3);
    FeedValues<float>(ws, "a", 100, r, 0);
    FeedValues<float>(ws, "b", 100, r, 0);
    auto op = CreateOperator(Gloo(MakeOp("Allreduce", {"cw", "a", "b"}, {"a", "b"})), &ws);
    op->Run();
    auto* stats = dynamic_cast<const CollectiveStatsSource*>(op.get());
    if (!stats) {
      res.mismatch = "Allreduce/GLOO is not a CollectiveStatsSource";
      return;
    }
    const CollectiveRunStats& s = stats->last_collective_run();
    Expect(res, "bytes", s.bytes, 2 * 100 * 4);
    Expect(res, "peers", s.peers, 2);
    if (!(s.seconds > 0)) res.mismatch = "no time recorded";
    if (std::string(s.algorithm).find("ring") == std::string::npos) res.mismatch = "algorithm " + std::string(s.algorithm);
    auto barrier = CreateOperator(Gloo(MakeOp("Barrier", {"cw"}, {})), &ws);
    barrier->Run();
    Expect(res, "barrier peers", dynamic_cast<const CollectiveStatsSource&>(*barrier).last_collective_run().peers, 2);
  });
  RequireAllOk(results);
}

TEST_CASE("gloo: the DAG executor runs collectives of one world in the same order on every rank", "[gloo][dag]") {
  auto results = RunRanks(2, [&](int r, Workspace& ws, RankResult& res) {
    CreateWorld(ws, r, 2);
    caffe2::NetDef net;
    net.set_name("dag_" + std::to_string(r));
    net.set_type("dag");
    net.set_num_workers(4);
    for (int k = 0; k < 8; ++k) {
      const std::string b = "t" + std::to_string(k);
      FeedValues<float>(ws, b, 100 + 3000 * k, r + k, 0);  // different sizes: a mix-up cannot sum right
      *net.add_op() = Gloo(MakeOp("Allreduce", {"cw", b}, {b}));
    }
    ws.CreateNet(net);
    for (int run = 0; run < 3; ++run) {
      for (int k = 0; k < 8; ++k) FeedValues<float>(ws, "t" + std::to_string(k), 100 + 3000 * k, r + k, 0);
      ws.RunNet(net.name());
      for (int k = 0; k < 8; ++k) Expect(res, "dag Allreduce", Values(ws, "t" + std::to_string(k)).back(), 1 + 2 * k);
    }
  });
  RequireAllOk(results);
}

TEST_CASE("gloo: argument and tensor errors name the op", "[gloo]") {
  auto results = RunRanks(2, [&](int r, Workspace& ws, RankResult& res) {
    CreateWorld(ws, r, 2);
    auto expect_error = [&](const caffe2::OperatorDef& def, const std::string& text) {
      try {
        ws.RunOperatorOnce(def);
        if (res.mismatch.empty()) res.mismatch = "no error for " + def.type() + " (" + text + ")";
      } catch (const Error& e) {
        if (res.mismatch.empty() && std::string(e.what()).find(text) == std::string::npos)
          res.mismatch = "error for " + def.type() + " lacks '" + text + "': " + e.what();
      }
    };
    Feed<uint8_t>(ws, "u8", {3}, {1, 2, 3});
    expect_error(Gloo(MakeOp("Allreduce", {"cw", "u8"}, {"u8"})), "Unhandled type: uint8");
    FeedValues<double>(ws, "d", 3, 0, 1);
    expect_error(Gloo(MakeOp("Broadcast", {"cw", "d"}, {"d"})), "Unhandled type: float64");
    FeedValues<float>(ws, "a", 3, 0, 1);
    FeedValues<float>(ws, "b", 4, 0, 1);
    FeedValues<int32_t>(ws, "c", 3, 0, 1);
    expect_error(Gloo(MakeOp("Allreduce", {"cw", "a", "b"}, {"a", "b"})), "Allreduce: every tensor must have the same");
    expect_error(Gloo(MakeOp("Allreduce", {"cw", "a", "c"}, {"a", "c"})), "same dtype");
    expect_error(Gloo(MakeOp("Allgather", {"cw", "a", "b"}, {"g"})), "Allgather: every input");
    expect_error(Gloo(MakeOp("Broadcast", {"cw", "a"}, {"a"}, {ArgI("root", 2)})), "root must be a rank");
    expect_error(Gloo(MakeOp("Allreduce", {"b", "a"}, {"a"})), "must hold a common world");
    Feed<int32_t>(ws, "counts", {2}, {1, 1});
    expect_error(Gloo(MakeOp("ReduceScatter", {"cw", "a", "counts"}, {"a", "counts"})), "recvCounts sum to 2");
    expect_error(Gloo(MakeOp("CreateCommonWorld", {"store"}, {"w"}, {ArgI("size", 2)})),
                 "CreateCommonWorld operator requires name");
    expect_error(Gloo(MakeOp("CreateCommonWorld", {"store"}, {"w"}, {ArgI("size", 2), ArgI("rank", 2)}), "w_op"),
                 "0 <= rank < size");
    expect_error(Gloo(MakeOp("CreateCommonWorld", {"store"}, {"w"}, {ArgI("size", 2), ArgS("transport", "udp")}), "w1"),
                 "Invalid transport: udp");
    expect_error(Gloo(MakeOp("CreateCommonWorld", {"store"}, {"w"}, {ArgI("size", 2), ArgS("interface", "nosuch0")}),
                      "w2"),
                 "nosuch0");
    expect_error(Gloo(MakeOp("CreateCommonWorld", {"store"}, {"w"}, {ArgI("size", 2), ArgS("transport", "ibverbs")}),
                      "w3"),
                 "ibverbs");
    expect_error(Gloo(MakeOp("SendTensor", {"cw", "a"}, {})), "does not have a default engine implementation");
    // Destroy: later collectives fail with kIo naming the world; an empty blob is a no-op.
    ws.RunOperatorOnce(Gloo(MakeOp("Barrier", {"cw"}, {})));
    ws.RunOperatorOnce(Gloo(MakeOp("DestroyCommonWorld", {"cw"}, {"cw"})));
    expect_error(Gloo(MakeOp("Allreduce", {"cw", "a"}, {"a"})), "closed by DestroyCommonWorld");
    ws.CreateBlob("never_made");
    ws.RunOperatorOnce(Gloo(MakeOp("DestroyCommonWorld", {"never_made"}, {"never_made"})));
  });
  RequireAllOk(results);
}

TEST_CASE("gloo: ranks that disagree on sizes get an error, not a Gloo abort", "[gloo]") {
  auto results = RunRanks(2, [&](int r, Workspace& ws, RankResult& res) {
    CreateWorld(ws, r, 2, "cw", 1500);
    FeedValues<float>(ws, "x", r == 0 ? 100 : 300, 1, 0);  // the larger message would abort Gloo
    try {
      ws.RunOperatorOnce(Gloo(MakeOp("Allreduce", {"cw", "x"}, {"x"})));
      res.mismatch = "no error for different sizes";
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kInvalidArgument || std::string(e.what()).find("the ranks disagree") == std::string::npos)
        res.mismatch = std::string("unexpected error: ") + e.what();
    }
    FeedValues<float>(ws, "x", 200, 1, 0);  // the world is still usable
    ws.RunOperatorOnce(Gloo(MakeOp("Allreduce", {"cw", "x"}, {"x"})));
    Expect(res, "after the disagreement", Values(ws, "x")[7], 2);
    // One rank alone changes its size on a kept op: it re-verifies while the other sends data, on
    // different slots, so both time out (kIo) rather than abort.
    caffe2::NetDef net;
    net.set_name("change_" + std::to_string(r));
    *net.add_op() = Gloo(MakeOp("Allreduce", {"cw", "y"}, {"y"}));
    FeedValues<float>(ws, "y", 50, 1, 0);
    ws.CreateNet(net);
    ws.RunNet(net.name());
    FeedValues<float>(ws, "y", r == 1 ? 5000 : 50, 1, 0);
    try {
      ws.RunNet(net.name());
      res.mismatch = "no error after a one-sided size change";
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kIo) res.mismatch = std::string("one-sided change: ") + e.what();
    }
  });
  RequireAllOk(results);
}

TEST_CASE("gloo: a rank that never joins fails the others within timeout_ms", "[gloo]") {
  auto results = RunRanks(3, [&](int r, Workspace& ws, RankResult&) {
    if (r == 2) return;  // never joins
    CreateWorld(ws, r, 3, "cw", 1500);
  });
  for (int r = 0; r < 2; ++r) {
    INFO("rank " << r << ": " << results[r].error);
    REQUIRE_FALSE(results[r].ok);
    CHECK((results[r].kind == ErrorKind::kTimeout || results[r].kind == ErrorKind::kIo));
    CHECK(results[r].seconds < 10);
  }
  CHECK(results[0].kind == ErrorKind::kTimeout);
  CHECK_THAT(results[0].error, Catch::Contains("Wait timeout for name(s)"));
}

TEST_CASE("gloo: a peer that stops taking part fails the collective with kIo, then the world fails fast",
          "[gloo]") {
  auto results = RunRanks(2, [&](int r, Workspace& ws, RankResult& res) {
    CreateWorld(ws, r, 2, "cw", 1000, {ArgS("status_blob", "status")});
    ws.RunOperatorOnce(Gloo(MakeOp("Barrier", {"cw"}, {})));
    if (r == 1) {  // leaves without running the allreduce; closes its connections when done
      std::this_thread::sleep_for(std::chrono::milliseconds(2500));
      return;
    }
    FeedValues<float>(ws, "x", 1 << 16, 1, 0);
    const auto t0 = Clock::now();
    try {
      ws.RunOperatorOnce(Gloo(MakeOp("Allreduce", {"cw", "x"}, {"x"}, {ArgS("status_blob", "st")})));
      res.mismatch = "the allreduce did not fail";
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kIo) res.mismatch = std::string("kind is not kIo: ") + e.what();
      if (std::string(e.what()).find("Allreduce on GLOO common world 'cw_op' rank 0 of 2") == std::string::npos)
        res.mismatch = std::string("message does not name the world: ") + e.what();
    }
    const double took = std::chrono::duration<double>(Clock::now() - t0).count();
    if (took > 5) res.mismatch = "the allreduce took " + std::to_string(took) + " s";
    auto st = FetchVec<int32_t>(ws, "st");
    if (st.size() != 1 || st[0] != 1) res.mismatch = "status_blob not set to [1]";
    // The world is unusable now: the next op fails at once, saying why.
    const auto t1 = Clock::now();
    try {
      ws.RunOperatorOnce(Gloo(MakeOp("Barrier", {"cw"}, {})));
      res.mismatch = "the barrier after the failure did not fail";
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kIo || std::string(e.what()).find("is unusable") == std::string::npos)
        res.mismatch = std::string("second failure: ") + e.what();
    }
    if (std::chrono::duration<double>(Clock::now() - t1).count() > 0.5) res.mismatch = "second failure was slow";
  });
  RequireAllOk(results);
}

TEST_CASE("gloo: a world of one rank runs every collective locally; each interface gets its own device",
          "[gloo]") {
  auto results = RunRanks(1, [&](int, Workspace& ws, RankResult& res) {
    CreateWorld(ws, 0, 1, "cw", 5000, {ArgS("interface", "lo")});
    CreateWorld(ws, 0, 1, "cw_default");
    const std::string lo = ws.GetBlobOrThrow("cw").Get<CommonWorldPtr>()->Describe();
    const std::string dflt = ws.GetBlobOrThrow("cw_default").Get<CommonWorldPtr>()->Describe();
    if (lo.find("interface 'lo'") == std::string::npos || dflt.find("interface 'lo'") != std::string::npos)
      res.mismatch = "devices: '" + lo + "' and '" + dflt + "'";
    FeedValues<float>(ws, "a", 6, 1, 1);
    FeedValues<float>(ws, "b", 6, 10, 0);
    ws.RunOperatorOnce(Gloo(MakeOp("Allreduce", {"cw", "a", "b"}, {"a", "b"})));
    for (const char* n : {"a", "b"}) Expect(res, "local Allreduce", Values(ws, n)[2], 13);
    ws.RunOperatorOnce(Gloo(MakeOp("Broadcast", {"cw", "a", "b"}, {"a", "b"})));
    ws.RunOperatorOnce(Gloo(MakeOp("Allgather", {"cw", "a", "b"}, {"g"})));
    Expect(res, "local Allgather", static_cast<double>(Values(ws, "g").size()), 12);
    ws.RunOperatorOnce(Gloo(MakeOp("Reduce", {"cw", "a"}, {"r"})));
    Expect(res, "local Reduce", Values(ws, "r")[0], 11);
    Feed<int32_t>(ws, "counts", {1}, {6});
    ws.RunOperatorOnce(Gloo(MakeOp("ReduceScatter", {"cw", "a", "b", "counts"}, {"a", "b", "counts"})));
    Expect(res, "local ReduceScatter", Values(ws, "b")[0], 22);
    ws.RunOperatorOnce(Gloo(MakeOp("Barrier", {"cw"}, {})));
  });
  RequireAllOk(results);
}

TEST_CASE("gloo: interface selection and the loopback guard", "[gloo]") {
  struct EnvGuard {
    ~EnvGuard() { unsetenv("MASTER_ADDR"); unsetenv("HETNET_SOCKET_IFNAME"); }
  } guard;
  unsetenv("HETNET_SOCKET_IFNAME");
  setenv("MASTER_ADDR", "127.0.0.1", 1);
  CHECK(GlooAdvertisedAddress("") == "127.0.0.1");  // a loopback world: fine
  CHECK(GlooAdvertisedAddress("lo") == "127.0.0.1");
  setenv("MASTER_ADDR", "192.0.2.77", 1);  // another host (TEST-NET-1; only routed, never contacted)
  CHECK_THROWS_WITH(GlooAdvertisedAddress("lo"),
                    Catch::Contains("would advertise 127.0.0.1 to remote peers; set HETNET_SOCKET_IFNAME"));
  setenv("HETNET_SOCKET_IFNAME", "lo", 1);
  CHECK_THROWS_WITH(GlooAdvertisedAddress(""), Catch::Contains("HETNET_SOCKET_IFNAME=lo"));
  unsetenv("HETNET_SOCKET_IFNAME");
  CHECK_THROWS_WITH(GlooAdvertisedAddress("nosuch0"), Catch::Contains("nosuch0"));
  // Without an interface, the address that routes to MASTER_ADDR is used (not loopback).
  std::string routed;
  try {
    routed = GlooAdvertisedAddress("");
  } catch (const Error& e) {
    WARN("no route to 192.0.2.77 on this machine: " << e.what());
  }
  if (!routed.empty()) CHECK(routed.rfind("127.", 0) != 0);
}

#endif  // HETNET_WITH_GLOO

}  // namespace hetnet
