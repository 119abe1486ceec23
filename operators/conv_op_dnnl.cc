// Conv, DNNL engine (oneDNN; the CPU default when built with it, see ResolveEngine in
// core/operator.cc). Same arguments, checks and messages as ConvOp (conv_op.h): the geometry comes
// from ComputeConvPoolGeom. float32, 2-D NCHW, any group, dilation, stride and (asymmetric) pads;
// also channels-last activations (activation_order NHWC, set by core/channels_last_pass.h) with the
// filter in NCHW order, which only this engine runs.
// Per input shape one convolution primitive is built and cached, with src/dst reorders when the
// primitive prefers a blocked activation layout; the filter is reordered into the primitive's
// layout once and again only when it changes (dnnl_util::ReorderedWeight). What oneDNN cannot run
// here (another dtype, empty tensors, a geometry whose output size oneDNN would compute otherwise,
// a problem oneDNN has no implementation for) runs the default engine's ConvOp<CPUContext>, unchanged.
// fused_activation "Relu" (Y = Relu(Conv(X)), set by the graph optimizer) is a oneDNN eltwise_relu
// post-op, applied while the output is in registers, except on the 1x1 NCHW (GEMM) path: there
// oneDNN 2.6's post-op made the convolution ~2x slower (measured, RESULTS.md), so a separate pass
// over Y (the Relu operator's kernel) follows. fused_residual (a fourth input R, conv_op.h) of Y's
// shape is a sum post-op before the Relu (R copied or reordered into the destination first).
#include <algorithm>
#include <map>
#include <memory>
#include <unordered_map>

#include "core/inference_fusion.h"
#include "device/dnnl_util.h"
#include "operators/conv_op.h"
#include "operators/relu_op.h"

namespace hetnet {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

class DnnlConvOp final : public Operator<CPUContext> {
 public:
  DnnlConvOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        args_(ParseConvPoolArgs(def, ConvPoolKind::Conv, /*allow_channels_last=*/true)),
        relu_(FusedReluArgument(def)),
        residual_(def),
        ws_(ws) {}

  void RunOnDevice() override {
    for (int i = 0; i < InputSize(); ++i)
      if (Input(i).dtype() != DataType::Float) return RunFallback();
    const Tensor& X = Input(0);
    const Tensor& F = Input(1);
    const bool has_bias = InputSize() >= 3;
    const ConvPoolGeom g = ComputeConvPoolGeom(def(), ConvPoolKind::Conv, args_, X.shape(), &F.shape(),
                                               has_bias ? &Input(2).shape() : nullptr);
    if (g.channels_last && g.N == 0 && g.OH > 0 && g.OW > 0) {  // an empty batch: nothing for oneDNN to do
      Output(0, g.y_shape(), DataType::Float);
      return;
    }
    if (!Expressible(g)) return RunFallback();  // channels-last: the default kernel's refusal names the op
    // A residual of Y's shape is oneDNN's sum post-op (added in registers, before the Relu); another
    // shape is added after the convolution by Add (broadcasting), and the Relu after that.
    const bool sum = residual_.present() && Input(3).shape() == g.y_shape();
    const bool add_after = residual_.present() && !sum;
    Plan* pp = PlanFor(g, has_bias, sum, relu_ && !add_after);
    if (!pp) return RunFallback();
    Plan& p = *pp;
    const float* r = sum ? Input(3).data<float>() : nullptr;  // read before Y (maybe the same blob) is sized
    Tensor* Y = Output(0, g.y_shape(), DataType::Float);
    dnnl::stream& s = dnnl_util::ThreadStream();
    memory src = dnnl_util::Wrap(p.user_src, X.raw_data());
    memory dst = dnnl_util::Wrap(p.user_dst, Y->mutable_data<float>());
    if (p.src_reorder) {
      p.src_reorder.execute(s, src, p.src);
      src = p.src;
    }
    if (sum && p.dst_reorder) {  // the residual into the primitive's layout
      memory residual = dnnl_util::Wrap(p.user_dst, r);
      p.residual_reorder.execute(s, residual, p.dst);
    } else if (sum && r != Y->data<float>()) {
      std::copy(r, r + Y->numel(), Y->mutable_data<float>());
    }
    std::unordered_map<int, memory> a{{DNNL_ARG_SRC, src},
                                      {DNNL_ARG_WEIGHTS, p.weight.Get(F, p.user_w, p.pd.weights_desc())},
                                      {DNNL_ARG_DST, p.dst_reorder ? p.dst : dst},
                                      {DNNL_ARG_SCRATCHPAD, p.scratch}};
    if (has_bias) a.emplace(DNNL_ARG_BIAS, dnnl_util::Wrap(p.pd.bias_desc(), Input(2).raw_data()));
    p.conv.execute(s, a);
    if (p.dst_reorder) p.dst_reorder.execute(s, p.dst, dst);
    s.wait();
    if (add_after) residual_.AddTo(def(), ws_);
    if (p.relu_pass || (relu_ && add_after)) {
      float* y = Y->mutable_data<float>();
      ReluKernel<CPUContext>(Y->numel(), y, y, &context_);
    }
  }

 private:
  struct Plan {
    memory::desc user_src, user_dst, user_w;
    dnnl::convolution_forward::primitive_desc pd;
    dnnl::convolution_forward conv;
    memory src, dst;  // blocked activations when the primitive wants them
    memory scratch;
    dnnl::reorder src_reorder, dst_reorder, residual_reorder;  // residual: user layout -> dst's, for the sum
    dnnl_util::ReorderedWeight weight;
    bool relu_pass = false;  // fused Relu as a pass over Y instead of a post-op
  };

  // oneDNN computes the output size from the pads as NOTSET does; legacy padding has already been
  // turned into explicit pads by the geometry, so this holds unless a pad rule gave another size.
  static bool Expressible(const ConvPoolGeom& g) {
    if (g.N == 0 || g.C == 0 || g.M == 0 || g.OH <= 0 || g.OW <= 0) return false;
    auto out = [](int64_t in, int k, int d, int s, int ph, int pt) {
      return (in + ph + pt - (static_cast<int64_t>(d) * (k - 1) + 1)) / s + 1;
    };
    return out(g.H, g.kh, g.dh, g.sh, g.pt, g.pb) == g.OH && out(g.W, g.kw, g.dw, g.sw, g.pl, g.pr) == g.OW;
  }

  // nullptr (cached too) when oneDNN has no implementation for the geometry.
  // sum: the residual's sum post-op; relu: a Relu after the convolution (post-op or pass).
  Plan* PlanFor(const ConvPoolGeom& g, bool has_bias, bool sum, bool relu) {
    const std::vector<int64_t> key{g.N, g.C, g.H, g.W, g.M, g.kh, g.kw, has_bias, sum, relu};
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second.get();
    if (plans_.size() >= dnnl_util::kMaxPlansPerOp) plans_.clear();  // shapes that keep changing
    auto p = std::make_unique<Plan>();
    const auto f32 = memory::data_type::f32;
    if (g.channels_last) {  // activation_order NHWC: oneDNN's native layout here, no reorders
      p->user_src = memory::desc({g.N, g.C, g.H, g.W}, f32, Tag::nhwc);
      p->user_dst = memory::desc({g.N, g.M, g.OH, g.OW}, f32, Tag::nhwc);
    } else {
      p->user_src = dnnl_util::PlainDesc({g.N, g.C, g.H, g.W});
      p->user_dst = dnnl_util::PlainDesc({g.N, g.M, g.OH, g.OW});
    }
    p->user_w = g.group == 1 ? dnnl_util::PlainDesc({g.M, g.C, g.kh, g.kw})
                             : dnnl_util::PlainDesc({g.group, g.M / g.group, g.C / g.group, g.kh, g.kw});
    // Activation layout, by measurement (benchmarks/bench_cpu_engines.cc): 1x1 stride-1 unpadded
    // convolutions run fastest on plain NCHW (oneDNN's GEMM path, no reorders); the others on the
    // blocked layout oneDNN picks, worth the per-run reorders of X and Y. Channels-last activations
    // are that layout already.
    const Tag act = g.channels_last ? Tag::nhwc : ConvIs1x1(g) ? Tag::nchw : Tag::any;
    p->relu_pass = relu && act == Tag::nchw;
    const memory::desc any_src({g.N, g.C, g.H, g.W}, f32, act), any_dst({g.N, g.M, g.OH, g.OW}, f32, act),
        any_w(p->user_w.dims(), f32, Tag::any), bias_md({g.M}, f32, Tag::a);
    // oneDNN's dilation counts the gaps between taps (ours minus one).
    try {
      const dnnl::convolution_forward::desc d(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, any_src, any_w,
          has_bias ? bias_md : memory::desc(), any_dst, {g.sh, g.sw}, {g.dh - 1, g.dw - 1}, {g.pt, g.pl}, {g.pb, g.pr});
      p->pd = dnnl::convolution_forward::primitive_desc(d, dnnl_util::Attributes(relu && !p->relu_pass, sum),
                                                           dnnl_util::CpuEngine());
    } catch (const dnnl::error&) {
      return plans_.emplace(key, nullptr).first->second.get();
    }
    p->conv = dnnl::convolution_forward(p->pd);
    p->scratch = memory(p->pd.scratchpad_desc(), dnnl_util::CpuEngine());
    if (!(p->pd.src_desc() == p->user_src)) {
      p->src = memory(p->pd.src_desc(), dnnl_util::CpuEngine());
      p->src_reorder = dnnl_util::Reorder(p->user_src, p->pd.src_desc());
    }
    if (!(p->pd.dst_desc() == p->user_dst)) {
      p->dst = memory(p->pd.dst_desc(), dnnl_util::CpuEngine());
      p->dst_reorder = dnnl_util::Reorder(p->pd.dst_desc(), p->user_dst);
      if (sum) p->residual_reorder = dnnl_util::Reorder(p->user_dst, p->pd.dst_desc());
    }
    return plans_.emplace(key, std::move(p)).first->second.get();
  }

  void RunFallback() {
    if (!fallback_) fallback_ = std::make_unique<ConvOp<CPUContext>>(def(), ws_);
    fallback_->Run();  // it reads fused_activation itself
  }

  ConvPoolArgs args_;
  bool relu_;  // fused_activation "Relu": a post-op of the convolution (a pass on the 1x1 path)
  ConvResidual residual_;  // fused_residual: a fourth input added before the Relu
  Workspace* ws_;
  // Keyed by (N, C, H, W, M, kH, kW, bias): with the op's fixed arguments that fixes the whole geometry.
  std::map<std::vector<int64_t>, std::unique_ptr<Plan>> plans_;
  std::unique_ptr<OperatorBase> fallback_;
};

}  // namespace

REGISTER_CPU_OPERATOR_WITH_ENGINE(Conv, DNNL, DnnlConvOp);

}  // namespace hetnet
