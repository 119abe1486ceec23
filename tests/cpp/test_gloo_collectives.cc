// Communicator ops with engine GLOO: N ranks as threads, each with its own Workspace, over real
// loopback TCP pairs and an in-process store (gloo_test_util.h). Schemas, every collective and
// dtype, rebinding after size changes, stats, a world of one rank, and the DAG executor's ordering
// of ops that share a common world. Failures: test_gloo_failures.cc.
#include <catch2/catch.hpp>

#include "core/placement.h"
#include "core/dag_graph.h"
#include "operators/communicator_op.h"
#include "gloo_test_util.h"

#if HETNET_WITH_GLOO
#include "device/collectives/gloo_common_world.h"
#endif

namespace hetnet {

using namespace glootest;

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

TEST_CASE("gloo: GPU-device communicator ops have staging GLOO kernels in CUDA builds", "[gloo]") {
  // Running them needs a GPU (operators/communicator_op_gloo_cuda.cc, tests/cpp/test_gloo_cuda.cc
  // [gpu][gloo]); here the registry and the placement a machine with a GPU would get.
  const std::vector<const char*> types = {"CreateCommonWorld", "CloneCommonWorld", "Allreduce", "Broadcast",
                                          "Reduce", "Allgather", "ReduceScatter", "Barrier"};
#if HETNET_WITH_CUDA
  for (const char* type : types) {
    INFO(type);
    CHECK(OperatorRegistry::Find(type, DeviceType::CUDA, "GLOO") != nullptr);
  }
  // No CUDA kernel of any engine: DestroyCommonWorld placed on a GPU runs on CPU (fallback).
  CHECK(OperatorRegistry::Find("DestroyCommonWorld", DeviceType::CUDA, "GLOO") == nullptr);
  caffe2::NetDef net;
  net.set_name("gloo_on_gpu");
  *net.add_op() = Gloo(MakeOp("CreateCommonWorld", {"store"}, {"cw"}, {ArgI("size", 2)}, Device::CUDA(0)), "cw_op");
  *net.add_op() = Gloo(MakeOp("Allreduce", {"cw", "x"}, {"x"}, {}, Device::CUDA(0)));
  *net.add_op() = Gloo(MakeOp("DestroyCommonWorld", {"cw"}, {"cw"}, {}, Device::CUDA(0)));
  const CopyPassResult placed =
      PlanPlacement(net, {"cpu", "cuda:0"}, {{"store", Device::CPU()}, {"x", Device::CUDA(0)}}, {}, PlacementOptions{});
  REQUIRE(placed.report.ops.size() == 3);  // no copies: the GPU tensor stays where it is
  CHECK(placed.report.copies.empty());
  CHECK(placed.report.ops[0].device == Device::CUDA(0));
  CHECK(placed.report.ops[1].device == Device::CUDA(0));
  CHECK(placed.report.ops[1].engine == "GLOO");
  CHECK(placed.report.ops[2].device == Device::CPU());
#else
  for (const char* type : types) CHECK(OperatorRegistry::Find(type, DeviceType::CUDA, "GLOO") == nullptr);
#endif
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
      FeedOnRank<int32_t>(ws, "counts", {size}, counts);
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
          // Segment r of the sum lands at the front of the output (as Gloo's algorithm left it for Caffe2).
          for (int64_t i = off; i < off + counts[r]; ++i)
            Expect(res, std::string("ReduceScatter ") + DataTypeName(dt), v[i - off], 2 * tri + size * (100 + 2.0 * i));
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
    FeedOnRank<int32_t>(ws, "counts", {1}, {6});
    ws.RunOperatorOnce(Gloo(MakeOp("ReduceScatter", {"cw", "a", "b", "counts"}, {"a", "b", "counts"})));
    Expect(res, "local ReduceScatter", Values(ws, "b")[0], 22);
    ws.RunOperatorOnce(Gloo(MakeOp("Barrier", {"cw"}, {})));
  });
  RequireAllOk(results);
}

#endif  // HETNET_WITH_GLOO

}  // namespace hetnet
