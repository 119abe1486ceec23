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
// post-op; the fallback kernels apply it themselves. In bfloat16 with several intra-op threads the
// rows run in bands on hetnet's pool, each a primitive built for one thread (see RunOnDevice).
#include <algorithm>
#include <map>
#include <memory>
#include <unordered_map>

#include "core/inference_fusion.h"
#include "core/intra_op_threads.h"
#include "core/reduced_precision.h"
#include "device/dnnl_util.h"
#include "device/math.h"
#include "operators/fc_engine_op.h"

namespace hetnet {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

constexpr double kMinPartsMacs = 1 << 20;  // below: one thread, one primitive (the DNNL Conv's kMinTeamMacs)

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
    if ((M <= 1 && !bf16) || M == 0 || K == 0 || N == 0) return RunFallback();
    // bfloat16 with several intra-op workers and several rows: bands of rows run as one-thread
    // primitives on hetnet's pool (one thread alone under kMinPartsMacs), as the DNNL Conv's parts
    // do. A primitive built for the whole OpenMP team leaves its threads spinning on the cores the
    // pool's next operator wants (LeNet in bfloat16 at 2 threads: 43% of the time in libgomp,
    // slower than float32). The bands share the weights reordered once. A single row keeps the
    // team: it cannot be cut into bands, and one thread alone made the MLP at batch 1 slower
    // (0.034-0.040 ms against 0.024-0.032). float32 keeps the team too: it reads W in place, and
    // each one-thread band packed all of W again (64 x 784 x 512 at 2 threads: 0.54-0.60 ms in
    // bands, 0.34-0.39 on the team; inference nets run float32 FC on PACKED anyway).
    const int workers = math::CpuWorkers();
    // Shapes that keep changing: start over (here, so that no plan of this run is dropped mid-run).
    if (plans_.size() >= 3 * dnnl_util::kMaxPlansPerOp) plans_.clear();
    const double macs = static_cast<double>(M) * static_cast<double>(K) * static_cast<double>(N);
    const bool own_threads = bf16 && workers > 1 && M > 1;
    const int64_t parts = !own_threads || macs < kMinPartsMacs ? 1 : std::min<int64_t>(M, workers);
    // [row(i), row(i + 1)): part i's rows; parts of one size share a plan.
    auto row = [&](int64_t i) { return M * i / parts; };
    std::vector<Plan*> plans(parts);
    {
      ScopedIntraOpThreads one(own_threads ? 1 : 0);
      for (int64_t i = 0; i < parts; ++i)
        if (!(plans[i] = PlanFor(row(i + 1) - row(i), K, N))) return RunFallback();  // the fallback has no bfloat16
    }
    Tensor* Y = Output(0, d.y_shape, dtype_);
    std::vector<memory> weights(parts);
    for (int64_t i = 0; i < parts; ++i) {
      Plan& p = *plans[i];
      weights[i] = p.weight.Get(W, p.user_w, p.pd.weights_desc());
      dnnl_util::EnsureSlotMemory(p.pd.scratchpad_desc(), workers, &p.slot_scratch);
    }
    const int64_t es = static_cast<int64_t>(Y->itemsize());
    const char* x = static_cast<const char*>(X.raw_data());
    char* y = static_cast<char*>(Y->raw_mutable_data(dtype_));
    auto run = [&](int64_t i, int slot) {
      Plan& p = *plans[i];
      dnnl::stream& s = dnnl_util::ThreadStream();
      p.ip.execute(s, {{DNNL_ARG_SRC, dnnl_util::Wrap(p.pd.src_desc(), x + row(i) * K * es)},
                       {DNNL_ARG_WEIGHTS, weights[i]},
                       {DNNL_ARG_BIAS, dnnl_util::Wrap(p.pd.bias_desc(), b.raw_data())},
                       {DNNL_ARG_DST, dnnl_util::Wrap(p.pd.dst_desc(), y + row(i) * N * es)},
                       {DNNL_ARG_SCRATCHPAD, p.slot_scratch[slot]}});
      s.wait();
    };
    if (parts == 1) {
      run(0, 0);
    } else {
      math::ParallelFor(parts, workers, run);
    }
  }

 private:
  struct Plan {
    memory::desc user_w;
    dnnl::inner_product_forward::primitive_desc pd;
    dnnl::inner_product_forward ip;
    std::vector<memory> slot_scratch;  // one per intra-op pool slot (a primitive may run on several at once)
    dnnl_util::ReorderedWeight weight;
  };

  // nullptr (cached too) when oneDNN has no implementation for the shape.
  Plan* PlanFor(int64_t M, int64_t K, int64_t N) {
    // Keyed by the intra-op thread count too: oneDNN fixes a primitive's OpenMP team size when it is
    // created (operators/conv_op_dnnl.cc's plans say more).
    const std::vector<int64_t> key{M, K, N, static_cast<int64_t>(dtype_), math::CpuWorkers()};
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second.get();
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
    if (p) p->ip = dnnl::inner_product_forward(p->pd);
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
