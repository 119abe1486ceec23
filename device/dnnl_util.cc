#include "device/dnnl_util.h"

#include <algorithm>
#include <cstring>

namespace hetnet {
namespace dnnl_util {

namespace {
PreparedWeightCache<ReorderLayout, dnnl::memory>& Cache() {
  // Never destroyed: operators may outlive static destruction order.
  static auto* c = new PreparedWeightCache<ReorderLayout, dnnl::memory>(
      [](const dnnl::memory& m) { return static_cast<int64_t>(m.get_desc().get_size()); });
  return *c;
}
}  // namespace

dnnl::engine& CpuEngine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

dnnl::stream& ThreadStream() {
  thread_local dnnl::stream s(CpuEngine());
  return s;
}

dnnl::memory::desc PlainDesc(const std::vector<int64_t>& dims, dnnl::memory::data_type type) {
  dnnl::memory::dims d(dims.begin(), dims.end()), strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * d[i + 1];
  return dnnl::memory::desc(d, type, strides);
}

bool Bf16Supported() {
  static const bool ok = [] {
    const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    return isa == dnnl::cpu_isa::avx512_core || isa == dnnl::cpu_isa::avx512_core_vnni ||
           isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
  }();
  return ok;
}

dnnl::memory Wrap(const dnnl::memory::desc& md, const void* data) {
  return dnnl::memory(md, CpuEngine(), const_cast<void*>(data));
}

void EnsureSlotMemory(const dnnl::memory::desc& desc, int slots, std::vector<dnnl::memory>* buffers) {
  while (static_cast<int>(buffers->size()) < std::max(slots, 1)) buffers->emplace_back(desc, CpuEngine());
}

dnnl::primitive_attr UserScratchpad() {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return a;
}

dnnl::reorder Reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  // Plain-to-blocked float reorders need no scratchpad; the library's is fine for the rare case.
  return dnnl::reorder(dnnl::reorder::primitive_desc(CpuEngine(), from, CpuEngine(), to));
}

int64_t WeightPreparations() { return Cache().Preparations(); }
size_t LivePreparedWeights() { return Cache().Live(); }

dnnl::primitive_attr Attributes(bool relu, bool sum) {
  dnnl::primitive_attr a = UserScratchpad();
  if (relu || sum) {
    dnnl::post_ops ops;
    if (sum) ops.append_sum(1.0f);  // dst = result + dst's previous contents, before the Relu
    if (relu) ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    a.set_post_ops(ops);
  }
  return a;
}

dnnl::memory ReorderedWeight::Get(const Tensor& W, const dnnl::memory::desc& user, const dnnl::memory::desc& want,
                                  int64_t offset) {
  const void* data = static_cast<const char*>(W.raw_data()) + offset * static_cast<int64_t>(W.itemsize());
  if (want == user) {  // the user's layout: read the tensor itself, nothing to keep fresh
    weight_.Reset();
    return Wrap(user, data);
  }
  return weight_.Get(W, ReorderLayout{user, want, offset}, Cache(), [&] {
    auto mem = std::make_shared<dnnl::memory>(want, CpuEngine());
    dnnl::memory src = Wrap(user, data);
    dnnl::stream& s = ThreadStream();
    Reorder(user, want).execute(s, src, *mem);
    s.wait();
    return std::shared_ptr<const dnnl::memory>(std::move(mem));
  });
}

}  // namespace dnnl_util
}  // namespace hetnet
