// oneDNN (Debian's libdnnl, built only with HETNET_WITH_DNNL) for the DNNL engine of CPU Conv and FC:
// the process's CPU engine, a stream per thread, memory descriptors of our row-major float tensors,
// and weights reordered once into the layout a primitive prefers (PreparedWeight).
//
// Threads: libdnnl here is built on OpenMP (libgomp, the runtime hetnet's own kernels use), so its
// primitives run on the same OpenMP pool at omp_get_max_threads() — no second pool to oversubscribe.
//
// Weight change detection. Tensor has no write counter, and a weight can be rewritten in place
// behind the same data pointer (FeedBlob into a tensor of the same size, an optimizer's in-place
// update in a training net), so the pointer alone would serve stale weights. A prepared weight is
// therefore keyed by (data pointer, shape, layout wanted) and a 64-bit content hash computed on each
// run (ContentHash: one streaming read of the weight, adds only, no copy). It detects every change of
// a single 8-byte word for certain (the plain sum of the words is part of it); a change of several
// words is missed only if both the sum and the position-weighted sum cancel.
// A write generation counter on Tensor/Storage would make this O(1) (see the DNNL section of
// benchmarks/RESULTS.md for what the hash costs).
#pragma once

#include <atomic>
#include <cstdint>
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
// A reorder primitive from one layout to another.
dnnl::reorder Reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to);

// Fletcher-style checksum of nbytes at p (sum of the 8-byte words and sum of the running sums,
// each mod 2^64); see the header comment for what it guarantees.
struct Checksum {
  uint64_t sum = 0, weighted = 0;
  bool operator==(const Checksum& o) const { return sum == o.sum && weighted == o.weighted; }
};
Checksum ContentHash(const void* p, size_t nbytes);

// How many times any weight has been reordered into a primitive's layout (tests check "once").
int64_t WeightPreparations();

// One operator's weight in the layout its primitive wants, reordered from the user's tensor when
// first asked for and again only when the tensor's pointer, shape or contents, or the wanted
// layout, changed. With want == the user's layout it wraps the tensor without copying.
class PreparedWeight {
 public:
  // W's float data described by `user` (dims in the primitive's logical order); returns memory in `want`.
  dnnl::memory Get(const Tensor& W, const dnnl::memory::desc& user, const dnnl::memory::desc& want);

 private:
  const void* data_ = nullptr;
  std::vector<int64_t> shape_;
  Checksum hash_;
  dnnl::memory::desc want_;
  dnnl::memory mem_;
  bool valid_ = false;
};

}  // namespace dnnl_util
}  // namespace hetnet
