// Communicator ops with engine GLOO when things go wrong: bad arguments and tensors, ranks that
// disagree on sizes, a rank that never joins, a peer that stops taking part (status_blob, the
// world failing fast afterwards), and the interface choice with its loopback guard.
#include <catch2/catch.hpp>

#include "operators/communicator_op.h"
#include "gloo_test_util.h"

#if HETNET_WITH_GLOO
#include "device/collectives/gloo_common_world.h"
#endif

namespace hetnet {

using namespace glootest;

#if HETNET_WITH_GLOO

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
    FeedOnRank<uint8_t>(ws, "u8", {3}, {1, 2, 3});
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
    FeedOnRank<int32_t>(ws, "counts", {2}, {2, 2});  // fewer than numel is allowed (as in Gloo), more is not
    expect_error(Gloo(MakeOp("ReduceScatter", {"cw", "a", "counts"}, {"a", "counts"})), "recvCounts sum to 4");
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
