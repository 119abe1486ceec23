// Shared by the GLOO kernels of the collective ops (operators/*_gloo.cc; only built with Gloo).
// Each kernel binds Gloo's per-call options to the current data pointers, sizes and context and
// keeps them while those stay the same: a run with nothing changed allocates nothing in hetnet
// (Gloo's ring algorithms allocate their own segment scratch per call), and a run after a pointer
// or size change rebinds, so ops stay correct when memory moves (Caffe2 refused with "Inputs/outputs
// have changed").
#pragma once

#include <chrono>
#include <cstring>
#include <vector>

#include "core/half.h"
#include "device/collectives/gloo_common_world.h"
#include "operators/communicator_op.h"

namespace hetnet {

// Gloo reduce function (void pointers, element count): c = a + b.
template <typename T>
void GlooSum(void* c, const void* a, const void* b, size_t n) {
  T* out = static_cast<T*>(c);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) out[i] = x[i] + y[i];
}
template <>
inline void GlooSum<Half>(void* c, const void* a, const void* b, size_t n) {
  Half* out = static_cast<Half*>(c);
  const Half* x = static_cast<const Half*>(a);
  const Half* y = static_cast<const Half*>(b);
  for (size_t i = 0; i < n; ++i) out[i] = FloatToHalf(HalfToFloat(x[i]) + HalfToFloat(y[i]));
}
using GlooReduceFn = void (*)(void*, const void*, const void*, size_t);

// The sum for an Allreduce/Reduce/ReduceScatter dtype, or nullptr when unhandled.
inline GlooReduceFn GlooSumFor(DataType t) {
  switch (t) {
    case DataType::Float: return &GlooSum<float>;
    case DataType::Float16: return &GlooSum<Half>;
    case DataType::Double: return &GlooSum<double>;
    case DataType::Int32: return &GlooSum<int32_t>;
    case DataType::Int64: return &GlooSum<int64_t>;
    default: return nullptr;
  }
}

// Broadcast and Allgather move bytes: Caffe2's dtypes.
inline bool GlooCopyTypeHandled(DataType t) {
  return t == DataType::Float || t == DataType::Float16 || t == DataType::Int32 || t == DataType::Int64;
}

// What a kernel's Gloo options were bound to; compared per run without allocating.
struct GlooBinding {
  const void* context = nullptr;
  std::vector<void*> ptrs;
  int64_t numel = -1;
  DataType dtype = DataType::Undefined;
  int64_t extra = 0;  // op-specific (root, ...)
  bool Same(const GlooBinding& o) const {
    return context == o.context && ptrs == o.ptrs && numel == o.numel && dtype == o.dtype && extra == o.extra;
  }
  void CopyFrom(const GlooBinding& o) {  // reuses ptrs' capacity
    context = o.context;
    ptrs.assign(o.ptrs.begin(), o.ptrs.end());
    numel = o.numel;
    dtype = o.dtype;
    extra = o.extra;
  }
};

// What every rank must agree on for one collective call: op type, elements, dtype, and an
// op-specific value (root, a hash of recvCounts).
struct GlooCallKey {
  int64_t type_hash = 0, numel = 0, dtype = 0, extra = 0;
  bool operator==(const GlooCallKey& o) const {
    return type_hash == o.type_hash && numel == o.numel && dtype == o.dtype && extra == o.extra;
  }
};

class GlooCollectiveOp : public Operator<CPUContext>, public CollectiveStatsSource {
 public:
  GlooCollectiveOp(const caffe2::OperatorDef& def, Workspace* ws);
  const CollectiveRunStats& last_collective_run() const override { return stats_; }

 protected:
  // Runs one Gloo collective on `world` (GlooCommonWorld::Run: errors become kIo and break the
  // world) and records its stats. On the first run, and whenever this rank's (numel, dtype,
  // extra) changes, the ranks first compare their keys (VerifyAcrossRanks).
  template <class Fn>
  void RunCollective(GlooCommonWorld& world, const char* what, const char* algorithm, int64_t bytes, int64_t numel,
                     DataType dtype, int64_t extra, Fn&& fn) {
    stats_ = CollectiveRunStats{bytes, 0, world.size() - 1, algorithm};
    const auto t0 = std::chrono::steady_clock::now();
    world.Run(what, [&] {
      const GlooCallKey key{type_hash_, numel, static_cast<int64_t>(dtype), extra};
      if (!verified_ || !(key == verified_key_)) VerifyAcrossRanks(world, key);
      fn();
    });
    stats_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  // A tiny allgather of every rank's key; throws kInvalidArgument on disagreement. Gloo aborts the
  // whole process when a peer sends more bytes than a receive expects (tcp/pair.cc "preamble.length
  // <= nbytes"), so sizes are compared before any data moves. A rank whose key changed alone runs
  // this while the others run the collective: different slots, so both sides time out (kIo)
  // instead of aborting. Costs one small allgather per change, none in steady state.
  void VerifyAcrossRanks(GlooCommonWorld& world, const GlooCallKey& key);
  // A run that needed no peers (one rank, or nothing to move).
  void RecordLocal(int64_t bytes, const char* algorithm) { stats_ = CollectiveRunStats{bytes, 0, 0, algorithm}; }

  // Input 0 as a GLOO world.
  GlooCommonWorld& World() {
    const CommonWorldPtr& w = CommonWorldInput(*this);
    auto* g = dynamic_cast<GlooCommonWorld*>(w.get());
    HN_ENFORCE(g, type(), " with engine GLOO needs a GLOO common world, but input 0 ('", def().input(0), "') is ",
               w->Describe());
    return *g;
  }
  // Writable pointers of outputs [0, count) (in place: the input tensors), into want_.ptrs.
  void CollectOutputPointers(int count, DataType dt) {
    want_.ptrs.clear();
    for (int i = 0; i < count; ++i) want_.ptrs.push_back(Output(i)->raw_mutable_data(dt));
  }
  // Copies ptrs[0] into the other pointers (Caffe2's multi-buffer collectives end this way).
  void CopyFirstToOthers(size_t nbytes) {
    for (size_t i = 1; i < want_.ptrs.size(); ++i) std::memcpy(want_.ptrs[i], want_.ptrs[0], nbytes);
  }
  // Sums every pointer into ptrs[0].
  void SumLocally(GlooReduceFn sum, size_t numel) {
    for (size_t i = 1; i < want_.ptrs.size(); ++i) sum(want_.ptrs[0], want_.ptrs[0], want_.ptrs[i], numel);
  }
  // Whether the kernel's Gloo options are bound to want_; MarkBound after a successful rebind.
  bool Bound() const { return bound_.Same(want_); }
  // Sets this run's context, element count, dtype and op-specific value (want_.ptrs are set by
  // the caller), then Bound().
  bool BoundTo(const void* context, int64_t numel, DataType dtype, int64_t extra = 0) {
    want_.context = context;
    want_.numel = numel;
    want_.dtype = dtype;
    want_.extra = extra;
    return Bound();
  }
  void MarkBound() { bound_.CopyFrom(want_); }

  CommunicatorStatus status_;
  GlooBinding want_, bound_;
  CollectiveRunStats stats_;

 private:
  int64_t type_hash_ = 0;
  bool verified_ = false;
  GlooCallKey verified_key_;
  std::vector<int64_t> verify_buf_;
};

}  // namespace hetnet
