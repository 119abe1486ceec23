// oneDNN (Debian's libdnnl, built only with HETNET_WITH_DNNL) for the DNNL engine of CPU Conv and FC:
// the process's CPU engine, a stream per thread, memory descriptors of our row-major float tensors,
// and weights reordered once into the layout a primitive prefers (ReorderedWeight).
//
// Threads: libdnnl here is built on OpenMP (libgomp, the runtime hetnet's own kernels use), so its
// primitives run on the same OpenMP pool at omp_get_max_threads() — no second pool to oversubscribe.
//
// Weights prepared once: ReorderedWeight keeps a filter reordered into a primitive's layout through
// device/prepared_weights.h (O(1) version check per run, one copy shared by all instances).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "core/tensor.h"
#include "device/prepared_weights.h"

namespace hetnet {
namespace dnnl_util {

// Primitives (each with its activation buffers, scratchpad and prepared weight) an operator keeps
// for the input shapes it has seen; past this many it starts over, so a net fed ever new batch
// sizes does not grow without bound.
constexpr size_t kMaxPlansPerOp = 8;

dnnl::engine& CpuEngine();
// A stream for the calling thread (oneDNN CPU streams are not to be shared between threads).
dnnl::stream& ThreadStream();

// A plain (row-major, dense) descriptor of dims (float32 unless said).
dnnl::memory::desc PlainDesc(const std::vector<int64_t>& dims,
                             dnnl::memory::data_type type = dnnl::memory::data_type::f32);
// Whether oneDNN runs bfloat16 convolutions and inner products on this CPU (AVX-512 at least;
// natively with AVX512_BF16).
bool Bf16Supported();
// oneDNN memory over a tensor's (or any) float buffer, no copy.
dnnl::memory Wrap(const dnnl::memory::desc& md, const void* data);
// Grows `buffers` to one memory of `desc` per intra-op pool slot (at least one): a primitive run in
// parts may run on several slots at once, each with its own scratchpad (and reordered activations).
void EnsureSlotMemory(const dnnl::memory::desc& desc, int slots, std::vector<dnnl::memory>* buffers);
// Attributes of every primitive here: scratchpad owned by the caller (allocated once per cached
// primitive) instead of oneDNN's per-execution allocation, which page-faults on every run.
dnnl::primitive_attr UserScratchpad();
// UserScratchpad, plus an eltwise_relu post-op when relu (fused_activation "Relu", read with
// FusedReluArgument of core/inference_fusion.h, the parser every engine shares).
// With sum, a sum post-op first: the result is added to what the destination held (a fused
// residual, operators/conv_op.h), then the Relu.
dnnl::primitive_attr Attributes(bool relu, bool sum = false);
// A reorder primitive from one layout to another.
dnnl::reorder Reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to);

// Test hooks: how many times any weight has been reordered into a primitive's layout (tests check
// "once"), and how many prepared weights are alive now (shared ones count once).
int64_t WeightPreparations();
size_t LivePreparedWeights();

// A reorder's two layouts: the user's (how the tensor stores W) and the one the primitive wants.
struct ReorderLayout {
  dnnl::memory::desc user, want;
  int64_t offset = 0;  // the slice's first element in the weight tensor
  bool operator==(const ReorderLayout& o) const { return user == o.user && want == o.want && offset == o.offset; }
};

// One operator's view of its weight in the layout its primitive wants.
class ReorderedWeight {
 public:
  // W's data (float32 or bfloat16) from element `offset` on (a slice: the caller keeps one ReorderedWeight per
  // slice; the shared cache tells slices apart), described by `user` (dims in the primitive's logical order); returns memory in `want`.
  // With want == the user's layout it wraps the tensor without copying.
  dnnl::memory Get(const Tensor& W, const dnnl::memory::desc& user, const dnnl::memory::desc& want,
                   int64_t offset = 0);

 private:
  hetnet::PreparedWeight<ReorderLayout, dnnl::memory> weight_;
};

}  // namespace dnnl_util
}  // namespace hetnet
