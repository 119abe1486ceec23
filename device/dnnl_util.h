// oneDNN (Debian's libdnnl, built only with HETNET_WITH_DNNL) for the DNNL engine of CPU Conv and FC:
// the process's CPU engine, a stream per thread, memory descriptors of our row-major float tensors,
// and weights reordered once into the layout a primitive prefers (PreparedWeight).
//
// Threads: libdnnl here is built on OpenMP (libgomp, the runtime hetnet's own kernels use), so its
// primitives run on the same OpenMP pool at omp_get_max_threads() — no second pool to oversubscribe.
//
// Weights prepared once. A filter reordered into a primitive's layout is kept while the tensor's
// (storage id, write generation) — see Tensor::write_generation — its data pointer, shape and the
// two layouts are unchanged: an O(1) check per run. Storage owned elsewhere (external_storage(),
// SetExternalData) can be written behind Tensor's back, so for it the version is a 64-bit content
// checksum computed on each run instead (ContentHash: one streaming read, adds only; it detects
// every change of a single 8-byte word for certain, a change of several words is missed only if
// both the sum and the position-weighted sum cancel).
// Prepared filters are shared through a process-wide cache of weak references keyed by that
// version, so the operator instances of every child workspace of a Predictor (one predict-net
// instance each, all reading the parent's weight storage) hold one copy, prepared once.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "core/tensor.h"

namespace hetnet {
namespace dnnl_util {

// Primitives (each with its activation buffers, scratchpad and prepared weight) an operator keeps
// for the input shapes it has seen; past this many it starts over, so a net fed ever new batch
// sizes does not grow without bound.
constexpr size_t kMaxPlansPerOp = 8;

dnnl::engine& CpuEngine();
// A stream for the calling thread (oneDNN CPU streams are not to be shared between threads).
dnnl::stream& ThreadStream();

// A plain (row-major, dense) float32 descriptor of dims.
dnnl::memory::desc PlainDesc(const std::vector<int64_t>& dims);
// oneDNN memory over a tensor's (or any) float buffer, no copy.
dnnl::memory Wrap(const dnnl::memory::desc& md, const void* data);
// Attributes of every primitive here: scratchpad owned by the caller (allocated once per cached
// primitive) instead of oneDNN's per-execution allocation, which page-faults on every run.
dnnl::primitive_attr UserScratchpad();
// UserScratchpad, plus an eltwise_relu post-op when relu (fused_activation "Relu", read with
// FusedReluArgument of core/inference_fusion.h, the parser every engine shares).
dnnl::primitive_attr Attributes(bool relu);
// A reorder primitive from one layout to another.
dnnl::reorder Reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to);

// Fletcher-style checksum of nbytes at p (sum of the 8-byte words and sum of the running sums,
// each mod 2^64); see the header comment for what it guarantees.
struct Checksum {
  uint64_t sum = 0, weighted = 0;
  bool operator==(const Checksum& o) const { return sum == o.sum && weighted == o.weighted; }
};
Checksum ContentHash(const void* p, size_t nbytes);

// Test hooks: how many times any weight has been reordered into a primitive's layout (tests check
// "once"), and how many prepared weights are alive now (shared ones count once).
int64_t WeightPreparations();
size_t LivePreparedWeights();

struct PreparedMemory;  // one prepared weight, immutable, shared (dnnl_util.cc)

// One operator's view of its weight in the layout its primitive wants: re-checked per run in O(1)
// (a checksum for external storage), taken from the shared cache (or reordered) when it changed.
// With want == the user's layout it wraps the tensor without copying.
class PreparedWeight {
 public:
  // W's float data described by `user` (dims in the primitive's logical order); returns memory in `want`.
  dnnl::memory Get(const Tensor& W, const dnnl::memory::desc& user, const dnnl::memory::desc& want);

 private:
  // What identifies the version of W that prepared_ was made from.
  uint64_t storage_id_ = 0, version_ = 0, version2_ = 0;
  const void* data_ = nullptr;
  std::vector<int64_t> shape_;
  dnnl::memory::desc user_, want_;
  std::shared_ptr<const PreparedMemory> prepared_;
};

}  // namespace dnnl_util
}  // namespace hetnet
