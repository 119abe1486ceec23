// FC and FCTransposed, DNNL engine (oneDNN inner product; the CPU default when built with it, see
// ResolveEngine in core/operator.cc). Same arguments, checks and messages as FCOp / FCTransposedOp
// (ComputeFCDims / ComputeFCTransposedDims): X flattened to [M, K], W to [N, K] (FC) or [K, N]
// (FCTransposed, described to oneDNN as the transposed layout of [N, K], no copy). One primitive per
// (M, K, N), cached. float32 W is read in place: measured on this machine (benchmarks/RESULTS.md), oneDNN's
// blocked weight layout plus the per-run weight check ReorderedWeight needs is no faster than its
// kernels on the plain layout (ReorderedWeight still guards the case where oneDNN wants another;
// re-measured with the write generation in place of the checksum: see RESULTS.md).
// Single rows (M = 1, a matrix-vector product) run the default engine's Eigen GEMV, measured faster;
// so do other dtypes (float16 FC), empty tensors and shapes oneDNN has no kernel for. bfloat16 X, W
// and b (reduced-precision inference, core/reduced_precision.h) run here at every M, float32
// accumulation inside oneDNN, Y bfloat16.
// fused_activation "Relu" (Y = Relu(FC(X)), set by the graph optimizer) is a oneDNN eltwise_relu
// post-op; the fallback kernels apply it themselves.
#include <map>
#include <memory>
#include <unordered_map>

#include "core/inference_fusion.h"
#include "core/reduced_precision.h"
#include "device/dnnl_util.h"
#include "device/math.h"
#include "operators/fc_engine_op.h"

namespace hetnet {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

template <bool kTransposed>
class DnnlFCOp final : public CpuFCEngineOp<kTransposed> {
  using Base = CpuFCEngineOp<kTransposed>;
  using Base::Input;
  using Base::Output;
  using Base::relu_;
  using Fallback = std::conditional_t<kTransposed, FCTransposedOp<CPUContext>, FCOp<CPUContext>>;

 public:
  using Base::Base;

  void RunOnDevice() override {
    // float32, or bfloat16 throughout (reduced-precision inference: float32 accumulation).
    dtype_ = Input(0).dtype();
    bool bf16 = dtype_ == DataType::BFloat16 && dnnl_util::Bf16Supported();
    for (int i = 1; i < 3; ++i) bf16 = bf16 && Input(i).dtype() == dtype_;
    if (!bf16 && !this->FloatInputs()) return RunFallback();
    const Tensor& X = Input(0);
    const Tensor& W = Input(1);
    const Tensor& b = Input(2);
    const FCDims d = this->Dims();
    const int64_t M = d.M, K = d.K, N = d.N;
    if ((M <= 1 && !bf16) || M == 0 || K == 0 || N == 0) return RunFallback();  // the fallback has no bfloat16
    Plan* pp = PlanFor(M, K, N);
    if (!pp) return RunFallback();
    Plan& p = *pp;
    Tensor* Y = Output(0, d.y_shape, dtype_);
    dnnl::stream& s = dnnl_util::ThreadStream();
    p.ip.execute(s, {{DNNL_ARG_SRC, dnnl_util::Wrap(p.pd.src_desc(), X.raw_data())},
                     {DNNL_ARG_WEIGHTS, p.weight.Get(W, p.user_w, p.pd.weights_desc())},
                     {DNNL_ARG_BIAS, dnnl_util::Wrap(p.pd.bias_desc(), b.raw_data())},
                     {DNNL_ARG_DST, dnnl_util::Wrap(p.pd.dst_desc(), Y->raw_mutable_data(dtype_))},
                     {DNNL_ARG_SCRATCHPAD, p.scratch}});
    s.wait();
  }

 private:
  struct Plan {
    memory::desc user_w;
    dnnl::inner_product_forward::primitive_desc pd;
    dnnl::inner_product_forward ip;
    memory scratch;
    dnnl_util::ReorderedWeight weight;
  };

  // nullptr (cached too) when oneDNN has no implementation for the shape.
  Plan* PlanFor(int64_t M, int64_t K, int64_t N) {
    // Keyed by the intra-op thread count too: oneDNN fixes a primitive's OpenMP team size when it is
    // created (operators/conv_op_dnnl.cc's plans say more).
    const std::vector<int64_t> key{M, K, N, static_cast<int64_t>(dtype_), math::CpuWorkers()};
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second.get();
    if (plans_.size() >= dnnl_util::kMaxPlansPerOp) plans_.clear();  // shapes that keep changing
    auto p = std::make_unique<Plan>();
    const auto f32 = dtype_ == DataType::BFloat16 ? memory::data_type::bf16 : memory::data_type::f32;
    // Logical weights are [N, K]; FCTransposed stores them K-major ([K, N] row-major = tag ba).
    p->user_w = memory::desc({N, K}, f32, kTransposed ? Tag::ba : Tag::ab);
    // Activations stay plain (row-major) so X and Y are read and written in place. bfloat16 weights
    // (constants of an inference net) take the layout the primitive prefers, reordered once: on
    // this CPU that is brgemm's blocked layout, 1.6-2x faster than its plain-layout GEMM at 8 rows
    // (784x512: 30 against 47 us; benchmarks/RESULTS.md, eleventh session).
    const memory::desc w_md = dtype_ == DataType::BFloat16 ? memory::desc({N, K}, f32, Tag::any) : p->user_w;
    try {
      const dnnl::inner_product_forward::desc d(dnnl::prop_kind::forward_inference, memory::desc({M, K}, f32, Tag::ab),
                                                w_md, memory::desc({N}, f32, Tag::a),
                                                memory::desc({M, N}, f32, Tag::ab));
      p->pd = dnnl::inner_product_forward::primitive_desc(d, dnnl_util::Attributes(relu_), dnnl_util::CpuEngine());
    } catch (const dnnl::error&) {
      p.reset();
    }
    if (p) {
      p->ip = dnnl::inner_product_forward(p->pd);
      p->scratch = memory(p->pd.scratchpad_desc(), dnnl_util::CpuEngine());
    }
    return plans_.emplace(key, std::move(p)).first->second.get();
  }

  void RunFallback() {
    Base::RunFallback([this] { return std::make_unique<Fallback>(this->def(), this->ws_); });
  }

  std::map<std::vector<int64_t>, std::unique_ptr<Plan>> plans_;
  DataType dtype_ = DataType::Float;  // this run's: float32 or bfloat16
};

}  // namespace

REGISTER_CPU_OPERATOR_WITH_ENGINE(FC, DNNL, DnnlFCOp<false>);
REGISTER_CPU_OPERATOR_WITH_ENGINE(FCTransposed, DNNL, DnnlFCOp<true>);

// Reduced-precision inference (core/reduced_precision.h): X, W and b in bfloat16, Y bfloat16.
const ReducedPrecisionKernel kBf16FC{{DataType::BFloat16}, 3, false,
                                     [](const caffe2::OperatorDef&, DataType) { return dnnl_util::Bf16Supported(); }};
REGISTER_REDUCED_PRECISION_KERNEL(FC, CPU, "DNNL", kBf16FC);
REGISTER_REDUCED_PRECISION_KERNEL(FCTransposed, CPU, "DNNL", kBf16FC);

}  // namespace hetnet
