// Helpers of the GLOO communicator tests (test_gloo_collectives.cc, test_gloo_failures.cc): an
// in-process StoreHandler, N ranks as threads each with its own Workspace, feeding and reading
// values of any dtype. Results are collected per rank and asserted on the main thread (Catch2's
// assertions are not thread-safe).
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "core/half.h"
#include "device/collectives/memory_store_handler.h"
#include "op_test_util.h"

namespace hetnet {
namespace glootest {

using namespace optest;
using Clock = std::chrono::steady_clock;

// The rank threads of one test rendezvous through an in-memory store.
using InProcessStore = MemoryStoreHandler;

struct RankResult {
  bool ok = true;
  ErrorKind kind = ErrorKind::kRuntime;
  std::string error;     // what() of a thrown error
  std::string mismatch;  // first wrong value seen, "" when all matched
  double seconds = 0;
};

// Runs fn(rank, ws) on `size` threads, each with a Workspace whose blob "store" holds `store`.
template <class Fn>
inline std::vector<RankResult> RunRanks(int size, Fn fn, StoreHandlerPtr store = std::make_shared<InProcessStore>()) {
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

inline caffe2::OperatorDef Gloo(caffe2::OperatorDef def, const std::string& name = "") {
  def.set_engine("GLOO");
  if (!name.empty()) def.set_name(name);
  return def;
}

inline void CreateWorld(Workspace& ws, int rank, int size, const std::string& cw = "cw", int64_t timeout_ms = 10000,
                 std::vector<caffe2::Argument> extra = {}) {
  std::vector<caffe2::Argument> args = {ArgI("rank", rank), ArgI("size", size), ArgI("timeout_ms", timeout_ms)};
  args.insert(args.end(), extra.begin(), extra.end());
  ws.RunOperatorOnce(Gloo(MakeOp("CreateCommonWorld", {"store"}, {cw}, args), cw + "_op"));
}

// Feeds `v` as a tensor of `shape`, without Catch2 macros (optest::HostTensor REQUIREs): for rank threads.
template <typename T>
void FeedOnRank(Workspace& ws, const std::string& name, const std::vector<int64_t>& shape, const std::vector<T>& v) {
  Tensor t(shape, DataTypeOf<T>::value);
  if (static_cast<size_t>(t.numel()) != v.size()) throw std::logic_error("FeedOnRank: shape and values disagree");
  std::copy(v.begin(), v.end(), t.mutable_data<T>());
  Feed(ws, name, t);
}

template <typename T>
void FeedValues(Workspace& ws, const std::string& name, int64_t n, double base, double step) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(base + step * static_cast<double>(i));
  FeedOnRank<T>(ws, name, {n}, v);
}
inline void FeedHalf(Workspace& ws, const std::string& name, int64_t n, double base, double step) {
  Tensor t({n}, DataType::Float16);
  Half* p = t.mutable_data<Half>();
  for (int64_t i = 0; i < n; ++i) p[i] = FloatToHalf(static_cast<float>(base + step * static_cast<double>(i)));
  Feed(ws, name, t);
}
// Blob values as doubles, whatever the dtype.
inline std::vector<double> Values(const Workspace& ws, const std::string& name) {
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
inline void Expect(RankResult& res, const std::string& what, double got, double want) {
  if (res.mismatch.empty() && std::abs(got - want) > 1e-6 * std::max(1.0, std::abs(want)))
    res.mismatch = what + ": got " + std::to_string(got) + ", want " + std::to_string(want);
}

inline void RequireAllOk(const std::vector<RankResult>& results) {
  for (size_t r = 0; r < results.size(); ++r) {
    INFO("rank " << r << ": " << results[r].error << results[r].mismatch);
    REQUIRE(results[r].ok);
    REQUIRE(results[r].mismatch.empty());
  }
}


}  // namespace glootest
}  // namespace hetnet
