// Conv, DNNL engine (oneDNN; the CPU default when built with it, see ResolveEngine in
// core/operator.cc). Same arguments, checks and messages as ConvOp (conv_op.h): the geometry comes
// from ComputeConvPoolGeom. float32, 2-D NCHW, any group, dilation, stride and (asymmetric) pads;
// also channels-last activations: Caffe2's order NHWC (filter [M, kH, kW, C/group]) and hetnet's
// activation_order NHWC (set by core/channels_last_pass.h, filter in NCHW order), and blocked
// activations, activation_order NCHW8c / NCHW16c (core/blocked_activations_pass.h: NCHW shapes,
// oneDNN's nChw8c / nChw16c bytes; X plain NCHW where its channels do not divide by the block),
// which only this engine runs. Blocked convolutions take those layouts as they are (no reorders)
// and have no default-engine fallback: what oneDNN cannot run there is an error naming the op.
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
// bfloat16 activations, filter and bias (reduced-precision inference, core/reduced_precision.h) run
// the same paths with bfloat16 memory; oneDNN accumulates in float32.
// float32 3x3 stride-1 convolutions run oneDNN's Winograd kernels (F(2x2,3x3) / F(4x4,3x3), blocked
// activations reordered in and out) where it has them: on the AVX-512 host they took ResNet-50's
// 3x3 stride-1 layers from 26.3 to 16.5 ms per image (reorders included), results within 1e-5 of
// the direct kernel relative to the output's largest value. Argument dnnl_winograd=0 (or
// HETNET_DNNL_WINOGRAD=0 for the process) keeps the direct kernel. Without AVX-512 oneDNN 2.6 has
// no Winograd kernels: there blocked (nChw8c) 3x3 stride-1 layers run hetnet's own F(4x4, 3x3)
// (operators/conv_winograd_f43.h) where its cost rule predicts a gain, or wherever it fits with
// dnnl_winograd=2.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <unordered_map>

#include "core/inference_fusion.h"
#include "core/intra_op_threads.h"
#include "core/reduced_precision.h"
#include "core/workspace.h"
#include "device/dnnl_util.h"
#include "device/math.h"
#include "operators/conv_dnnl_parts.h"
#include "operators/conv_op.h"
#include "operators/conv_winograd_f43.h"
#include "operators/relu_op.h"

namespace hetnet {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

// Below this many multiply-adds, a convolution that cannot run in parts runs on one thread, not
// oneDNN's team.
constexpr double kMinTeamMacs = 1 << 20;

class DnnlConvOp final : public Operator<CPUContext> {
 public:
  DnnlConvOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        args_(ParseConvPoolArgs(def, ConvPoolKind::Conv, /*allow_channels_last=*/true, /*allow_blocked=*/true)),
        relu_(FusedReluArgument(def)),
        residual_(def),
        winograd_(ArgumentHelper(def).GetSingleArgument<int>("dnnl_winograd", WinogradByDefault())),
        ws_(ws) {}

  void RunOnDevice() override {
    // float32, or bfloat16 throughout (reduced-precision inference: float32 accumulation).
    dtype_ = Input(0).dtype();
    if (dtype_ != DataType::Float && !(dtype_ == DataType::BFloat16 && dnnl_util::Bf16Supported())) return RunFallback();
    for (int i = 0; i < InputSize(); ++i)
      if (Input(i).dtype() != dtype_) return RunFallback();
    const Tensor& X = Input(0);
    const Tensor& F = Input(1);
    const bool has_bias = InputSize() >= 3;
    const ConvPoolGeom g = ComputeConvPoolGeom(def(), ConvPoolKind::Conv, args_, X.shape(), &F.shape(),
                                               has_bias ? &Input(2).shape() : nullptr);
    HN_ENFORCE(g.M % std::max(g.channel_block, 1) == 0, def().type(), " '", def().name(), "': ", g.M,
               " output channels are not a whole number of blocks of ", g.channel_block, " (activation_order NCHW",
               g.channel_block, "c)");
    if ((g.channels_last || Blocked()) && g.N == 0 && g.OH > 0 && g.OW > 0) {  // an empty batch: nothing for oneDNN to do
      Output(0, g.y_shape(), dtype_);
      return;
    }
    if (!Expressible(g)) return RunFallback();  // channels-last: the default kernel's refusal names the op
    // Shapes that keep changing: start over (here, so that no plan of this run is dropped mid-run;
    // each shape may hold a whole plan and one per part).
    if (plans_.size() >= 3 * dnnl_util::kMaxPlansPerOp) plans_.clear();
    // A residual of Y's shape is oneDNN's sum post-op (added in registers, before the Relu); another
    // shape is added after the convolution by Add (broadcasting), and the Relu after that.
    const bool sum = residual_.present() && Input(3).shape() == g.y_shape();
    const bool add_after = residual_.present() && !sum;
    HN_CHECK_KIND(kUnsupported, !(add_after && Blocked()), def().type(), " '", def().name(), "': the residual '",
                  def().input(3), "' ", Input(3).ShapeString(), " must have the output's shape ",
                  ShapeToString(g.y_shape()), " with blocked activations");
    const bool relu = relu_ && !add_after;
    const int workers = math::CpuWorkers();  // the parts' (before `single` below)
    if (winograd_ && dtype_ == DataType::Float && WinogradF43Conv::Fits(g) &&
        (winograd_ == 2 || WinogradF43Conv::Pays(g))) {
      const void* r = nullptr;
      Tensor* Y = OutputBesideResidual(g, sum, &r);
      own_winograd_.Run(g, X.data<float>(), F, has_bias ? Input(2).data<float>() : nullptr,
                        static_cast<const float*>(r), relu, Y->mutable_data<float>(), workers);
      return;
    }
    // Small convolutions (under kMinTeamMacs) are built for and run on one thread: an OpenMP
    // team gains little there and stalls whenever a member is descheduled (LeNet's conv1 with the
    // other core busy: 8 ms instead of 0.1).
    ScopedIntraOpThreads single(ConvMacs(g) < kMinTeamMacs ? 1 : 0);
    Plan* pp = PlanFor(g, has_bias, sum, relu);
    if (!pp) return RunFallback();
    Plan& p = *pp;
    const void* r = nullptr;
    Tensor* Y = OutputBesideResidual(g, sum, &r);
    if (((!p.src_reorder && !p.dst_reorder) || p.winograd) && RunInParts(g, workers, has_bias, sum, relu, r, Y)) {
      AddResidualAndRelu(p, add_after, Y);
      return;
    }
    dnnl::stream& s = dnnl_util::ThreadStream();
    if (sum && !p.dst_reorder && r != Y->raw_data()) std::memcpy(Y->raw_mutable_data(Y->dtype()), r, Y->nbytes());
    Execute(p, s, dnnl_util::Wrap(p.user_src, X.raw_data()), dnnl_util::Wrap(p.user_dst, Y->raw_mutable_data(Y->dtype())),
            sum, sum ? dnnl_util::Wrap(p.user_dst, r) : memory(), p.src, p.dst, p.weight.Get(F, p.user_w, p.pd.weights_desc()),
            has_bias ? Input(2).raw_data() : nullptr, p.scratch);
    s.wait();
    AddResidualAndRelu(p, add_after, Y);
  }

 private:
  struct Plan {
    memory::desc user_src, user_dst, user_w;
    dnnl::convolution_forward::primitive_desc pd;
    dnnl::convolution_forward conv;
    memory src, dst;  // blocked activations when the primitive wants them
    memory scratch;
    std::vector<memory> slot_scratch;  // RunInParts: one per intra-op pool slot
    std::vector<memory> slot_src, slot_dst;  // RunInParts with activation reorders: likewise
    dnnl::reorder src_reorder, dst_reorder, residual_reorder;  // residual: user layout -> dst's, for the sum
    dnnl_util::ReorderedWeight weight;
    bool relu_pass = false;  // fused Relu as a pass over Y instead of a post-op
    bool winograd = false;   // oneDNN's Winograd algorithm (blocked activations, reordered in and out)
  };

  // A constant filter that the own Winograd kernel will take is transformed when the net is created
  // (the step that made ResNet-18's first run 0.3-0.5 s longer). The choice is judged on one image
  // of 16x16: the cost rule turns on the image's size only below 3x3 outputs.
  bool PrepareConstantInputs(const std::vector<bool>& constant) override {
    if (!winograd_ || !Blocked() || !constant[1]) return false;
    const Tensor& F = Input(1);
    if (F.dtype() != DataType::Float || F.ndim() != 4) return false;
    const ConvPoolGeom g =
        ComputeConvPoolGeom(def(), ConvPoolKind::Conv, args_, {1, F.dim(1), 16, 16}, &F.shape(), nullptr);
    if (WinogradF43Conv::Fits(g) && (winograd_ == 2 || WinogradF43Conv::Pays(g)))
      own_winograd_.Prepare(F, math::CpuWorkers());
    return false;  // Y is the run's
  }

  static int WinogradByDefault() {
    const char* v = std::getenv("HETNET_DNNL_WINOGRAD");
    return v && std::string(v) == "0" ? 0 : 1;
  }
  // Where oneDNN 2.6 has Winograd kernels (float32 3x3, stride 1, no dilation, one group, pads of at
  // most 1), and enough channels for its 16-channel blocks.
  bool WinogradFits(const ConvPoolGeom& g) const {
    return winograd_ && dtype_ == DataType::Float && g.group == 1 && g.kh == 3 && g.kw == 3 && g.sh == 1 &&
           g.sw == 1 && g.dh == 1 && g.dw == 1 && std::max({g.pt, g.pb, g.pl, g.pr}) <= 1 && g.C >= 16 && g.M >= 16;
  }

  // One run of p's primitive from src to dst (the user's layouts), through src_buf and dst_buf where
  // the primitive wants its own layout. With the sum post-op, `residual` (the user's layout) goes
  // into dst_buf first; without a dst reorder the caller has put it in dst already. (memory objects
  // are handles, taken by value: oneDNN's reorder takes them by non-const reference.)
  static void Execute(Plan& p, dnnl::stream& s, memory src, memory dst, bool sum, memory residual, memory src_buf,
                      memory dst_buf, const memory& weights, const void* bias, const memory& scratch) {
    if (p.src_reorder) {
      p.src_reorder.execute(s, src, src_buf);
      src = src_buf;
    }
    if (sum && p.dst_reorder) p.residual_reorder.execute(s, residual, dst_buf);
    std::unordered_map<int, memory> a{{DNNL_ARG_SRC, src},
                                      {DNNL_ARG_WEIGHTS, weights},
                                      {DNNL_ARG_DST, p.dst_reorder ? dst_buf : dst},
                                      {DNNL_ARG_SCRATCHPAD, scratch}};
    if (bias) a.emplace(DNNL_ARG_BIAS, dnnl_util::Wrap(p.pd.bias_desc(), bias));
    p.conv.execute(s, a);
    if (p.dst_reorder) p.dst_reorder.execute(s, dst_buf, dst);
  }

  // fused_residual_reuse (the inference rewrite's: no op reads R after this one): Y and R swap
  // tensors, so the sum post-op finds R in place in Y instead of in a copy (ResNet-50 at batch 1
  // copies 22 MB per run otherwise), and R's blob keeps a buffer of its own (Y's former one) that its
  // producer refills next run. Sharing R's buffer instead left it held by both blobs, so that in a
  // chain (R the output of the previous fused Conv) every second residual was shared and copied.
  // Not when R's storage is shared with another blob (a view) or owned elsewhere: writing Y would
  // change that blob too. True when Y now holds R.
  bool TakeResidualStorage() {
    const Tensor& R = Input(3);
    Tensor* Y = Output(0);
    if (Y->SharesStorageWith(R)) return true;
    if (R.external_storage() || R.storage().use_count() != 1 || &R == Y) return false;
    std::swap(*Y, *ws_->GetMutableBlob(def().input(3))->GetMutable<Tensor>());
    return true;
  }
  // Y for the kernels that add the residual R themselves (sum): in R's own buffer where it may take
  // it (*r then points into Y), else apart from it (*r points to R). *r is null without a sum.
  Tensor* OutputBesideResidual(const ConvPoolGeom& g, bool sum, const void** r) {
    const bool in_place = sum && reuse_residual_ && TakeResidualStorage();
    if (!in_place) ReleaseResidualStorage();
    Tensor* Y = Output(0, g.y_shape(), dtype_);  // in place: already R's buffer and shape
    *r = !sum ? nullptr : in_place ? Y->raw_data() : Input(3).raw_data();
    return Y;
  }
  // Every other path writes Y before it reads R (the Add after, the default kernels): Y must not
  // share R's storage.
  void ReleaseResidualStorage() {
    if (residual_.present() && Output(0)->SharesStorageWith(Input(3))) *Output(0) = Tensor();
  }

  // After the primitive(s): a residual of another shape, and the Relu when it is a pass.
  void AddResidualAndRelu(const Plan& p, bool add_after, Tensor* Y) {
    if (add_after) residual_.AddTo(def(), ws_);
    if (p.relu_pass || (relu_ && add_after)) {
      if (Y->dtype() == DataType::BFloat16) {
        uint16_t* y = static_cast<uint16_t*>(Y->raw_mutable_data(Y->dtype()));
        for (int64_t i = 0; i < Y->numel(); ++i) y[i] = (y[i] & 0x8000) ? 0 : y[i];  // negative (and -0) -> +0
        return;
      }
      float* y = Y->mutable_data<float>();
      ReluKernel<CPUContext>(Y->numel(), y, y, &context_);
    }
  }

  // Parallel parts on the intra-op pool (device/cpu_thread_pool.h) instead of oneDNN's OpenMP team,
  // for convolutions without activation reorders (channels-last, or plain 1x1 with several images),
  // cut as operators/conv_dnnl_parts.h says. A descheduled thread never stalls the others (an OpenMP
  // team waits for it at every barrier: with the other core busy, ResNet-18 at batch 1 took 156 ms,
  // not 25). False (nothing run) when one part would do.
  bool RunInParts(const ConvPoolGeom& g, int workers, bool has_bias, bool sum, bool relu, const void* r_raw,
                  Tensor* Y) {
    const ConvPartition cut = ConvPartition::For(g, workers);
    const int64_t parts = cut.parts;
    if (parts <= 1) return false;
    const bool channels = cut.split == ConvPartition::kChannels;  // gathered; kImageChannels write in place
    const bool slices = channels || cut.split == ConvPartition::kImageChannels;
    std::vector<Plan*> plans(parts);
    std::vector<int64_t> in_rows(parts);
    {
      ScopedIntraOpThreads one(1);  // each part's primitive is built for (and run by) one thread
      for (int64_t i = 0; i < parts; ++i) {
        plans[i] = PlanFor(cut.PartGeom(g, i, &in_rows[i]), has_bias, sum, relu, slices ? cut.Bound(i) : -1);
        if (!plans[i] || ((plans[i]->src_reorder || plans[i]->dst_reorder) && !plans[i]->winograd)) return false;
      }
    }
    // Parts of one geometry share a plan (except channel parts, each with its filter slice): its
    // weight is looked up here, once per part, and each pool slot gets its own scratchpad (a
    // primitive may run on several threads at once).
    const int64_t filter_per_m = (g.C / g.group) * g.kh * g.kw;
    std::vector<memory> weights(parts);
    const Tensor& F = Input(1);
    for (int64_t i = 0; i < parts; ++i) {
      Plan& p = *plans[i];
      const int64_t offset = slices ? cut.Bound(i) * filter_per_m : 0;
      weights[i] = p.weight.Get(F, p.user_w, p.pd.weights_desc(), offset);
      dnnl_util::EnsureSlotMemory(p.pd.scratchpad_desc(), workers, &p.slot_scratch);
      if (p.src_reorder) dnnl_util::EnsureSlotMemory(p.pd.src_desc(), workers, &p.slot_src);
      if (p.dst_reorder) dnnl_util::EnsureSlotMemory(p.pd.dst_desc(), workers, &p.slot_dst);
    }
    // Byte pointers: float32 or bfloat16 elements of es bytes.
    const int64_t es = static_cast<int64_t>(Y->itemsize());
    char* y = static_cast<char*>(Y->raw_mutable_data(Y->dtype()));
    const char* r = static_cast<const char*>(r_raw);
    const int64_t pixels = g.N * g.OH * g.OW;
    if (channels) channel_parts_.resize(static_cast<size_t>(pixels * g.M * es));
    if (sum && r != y && !channels) std::memcpy(y, r, Y->nbytes());
    const char* x = static_cast<const char*>(Input(0).raw_data());
    const char* b = has_bias ? static_cast<const char*>(Input(2).raw_data()) : nullptr;
    math::ParallelFor(parts, workers, [&](int64_t i, int slot) {
      Plan& p = *plans[i];
      const int64_t m0 = slices ? cut.Bound(i) : 0, mp = channels ? p.pd.dst_desc().dims()[1] : 0;
      char* part_y = channels ? channel_parts_.data() + pixels * m0 * es : nullptr;  // [pixels, mp], dense
      // Y's (and R's) channels [m0, m0 + mp) of every pixel <-> the part's dense buffer.
      auto gather = [&](const char* from, char* to, bool into_part) {
        for (int64_t q = 0; q < pixels; ++q) {
          if (into_part) std::memcpy(to + q * mp * es, from + (q * g.M + m0) * es, mp * es);
          else std::memcpy(to + (q * g.M + m0) * es, from + q * mp * es, mp * es);
        }
      };
      if (channels && sum) gather(r, part_y, true);
      const int64_t x_off = cut.SrcOffset(g, i, in_rows[i]);
      char* dst = channels ? part_y : y + cut.DstOffset(g, i) * es;
      dnnl::stream& s = dnnl_util::ThreadStream();
      // The part's output already holds its residual; a Winograd part reorders in this slot's buffers.
      const memory user_dst = dnnl_util::Wrap(p.user_dst, dst);
      Execute(p, s, dnnl_util::Wrap(p.user_src, x + x_off * es), user_dst, sum, user_dst,
              p.src_reorder ? p.slot_src[slot] : memory(), p.dst_reorder ? p.slot_dst[slot] : memory(), weights[i],
              b ? b + m0 * es : nullptr, p.slot_scratch[slot]);
      s.wait();
      if (channels) gather(part_y, y, false);
    });
    return true;
  }

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
  // sum: the residual's sum post-op; relu: a Relu after the convolution (post-op or pass). Keyed by
  // the pads too (RunInParts' bands differ in them) and by the intra-op thread count.
  // m_begin: a channel part's first output channel (its own plan: its own filter slice), else -1.
  Plan* PlanFor(const ConvPoolGeom& g, bool has_bias, bool sum, bool relu, int64_t m_begin = -1) {
    // And by the thread count the primitive is built for: oneDNN (OpenMP) fixes a primitive's
    // team size when it is created, so RunInParts' one-thread parts must not reuse the plan of an
    // equal geometry built for the whole team (LeNet's conv2 planned at batch 1, then reused for
    // each image of a batch of 8: every part forked its own OpenMP team of 2, 0.31 -> 0.48 ms).
    const std::vector<int64_t> key{g.N,  g.C,     g.H,  g.W,  g.M,
                                   g.kh, g.kw,    g.pt, g.pb, has_bias,
                                   sum,  relu,    m_begin, static_cast<int64_t>(dtype_),
                                   math::CpuWorkers()};
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second.get();
    auto p = std::make_unique<Plan>();
    const auto dt = dtype_ == DataType::BFloat16 ? memory::data_type::bf16 : memory::data_type::f32;
    if (Blocked()) {  // blocked activations (X plain NCHW where its channels do not divide by the block)
      const Tag blocked = g.channel_block == 16 ? Tag::nChw16c : Tag::nChw8c;
      p->user_src = memory::desc({g.N, g.C, g.H, g.W}, dt, g.blocked_input() ? blocked : Tag::nchw);
      p->user_dst = memory::desc({g.N, g.M, g.OH, g.OW}, dt, blocked);
    } else if (g.channels_last) {  // activation_order NHWC: oneDNN's native layout here, no reorders
      p->user_src = memory::desc({g.N, g.C, g.H, g.W}, dt, Tag::nhwc);
      p->user_dst = memory::desc({g.N, g.M, g.OH, g.OW}, dt, Tag::nhwc);
    } else {
      p->user_src = dnnl_util::PlainDesc({g.N, g.C, g.H, g.W}, dt);
      p->user_dst = dnnl_util::PlainDesc({g.N, g.M, g.OH, g.OW}, dt);
    }
    if (g.filter_hwc)  // Caffe2's order NHWC: [M, kH, kW, C/group], oneDNN's ohwi / gohwi
      p->user_w = g.group == 1 ? memory::desc({g.M, g.C, g.kh, g.kw}, dt, Tag::ohwi)
                               : memory::desc({g.group, g.M / g.group, g.C / g.group, g.kh, g.kw}, dt, Tag::gohwi);
    else
      p->user_w = g.group == 1 ? dnnl_util::PlainDesc({g.M, g.C, g.kh, g.kw}, dt)
                               : dnnl_util::PlainDesc({g.group, g.M / g.group, g.C / g.group, g.kh, g.kw}, dt);
    // Activation layout, by measurement (benchmarks/bench_cpu_engines.cc): 1x1 stride-1 unpadded
    // convolutions run fastest on plain NCHW (oneDNN's GEMM path, no reorders); the others on the
    // blocked layout oneDNN picks, worth the per-run reorders of X and Y. Channels-last activations
    // are that layout already, and so are blocked ones (taken as they are where oneDNN can).
    const Tag act = g.channels_last ? Tag::nhwc : ConvIs1x1(g) && !Blocked() ? Tag::nchw : Tag::any;
    p->relu_pass = relu && act == Tag::nchw;
    const memory::desc any_src({g.N, g.C, g.H, g.W}, dt, act), any_dst({g.N, g.M, g.OH, g.OW}, dt, act),
        any_w(p->user_w.dims(), dt, Tag::any), bias_md({g.M}, dt, Tag::a);
    const memory::desc& direct_src = Blocked() ? p->user_src : any_src;
    const memory::desc& direct_dst = Blocked() ? p->user_dst : any_dst;
    // oneDNN's dilation counts the gaps between taps (ours minus one).
    auto build = [&](dnnl::algorithm algorithm, const memory::desc& src, const memory::desc& dst) {
      const dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, algorithm, src, any_w,
                                              has_bias ? bias_md : memory::desc(), dst, {g.sh, g.sw},
                                              {g.dh - 1, g.dw - 1}, {g.pt, g.pl}, {g.pb, g.pr});
      p->pd = dnnl::convolution_forward::primitive_desc(d, dnnl_util::Attributes(relu && !p->relu_pass, sum),
                                                           dnnl_util::CpuEngine());
    };
    if (WinogradFits(g)) {
      try {  // its own blocked activations
        build(dnnl::algorithm::convolution_winograd, memory::desc(any_src.dims(), dt, Tag::any),
              memory::desc(any_dst.dims(), dt, Tag::any));
        // oneDNN reorders only some filter layouts into Winograd's (not order NHWC's ohwi).
        dnnl_util::Reorder(p->user_w, p->pd.weights_desc());
        p->winograd = true;
      } catch (const dnnl::error&) {  // no kernel for this geometry (or this CPU): the direct one
      }
    }
    try {
      if (!p->winograd) build(dnnl::algorithm::convolution_direct, direct_src, direct_dst);
    } catch (const dnnl::error&) {
      try {  // blocked: oneDNN's own layouts, reordered in and out
        if (!Blocked()) throw;
        build(dnnl::algorithm::convolution_direct, any_src, any_dst);
      } catch (const dnnl::error&) {
        return plans_.emplace(key, nullptr).first->second.get();
      }
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
    HN_CHECK_KIND(kUnsupported, !Blocked(), def().type(), " '", def().name(), "' (DNNL): activation_order NCHW",
                  args_.channel_block, "c runs only on oneDNN's kernels, which have none for ", DataTypeName(dtype_),
                  " input '", def().input(0), "' ", Input(0).ShapeString(), " with filter '", def().input(1), "' ",
                  Input(1).ShapeString());
    ReleaseResidualStorage();
    if (!fallback_) fallback_ = std::make_unique<ConvOp<CPUContext>>(def(), ws_);
    fallback_->Run();  // it reads fused_activation itself
  }

  ConvPoolArgs args_;
  bool Blocked() const { return args_.channel_block != 0; }  // activation_order NCHW8c / NCHW16c
  bool relu_;  // fused_activation "Relu": a post-op of the convolution (a pass on the 1x1 path)
  ConvResidual residual_;  // fused_residual: a fourth input added before the Relu
  const int winograd_;  // dnnl_winograd: 0 never, 1 where WinogradFits (own: where it pays), 2 (own) wherever it fits
  const bool reuse_residual_ = ArgumentHelper(def()).GetSingleArgument<int>("fused_residual_reuse", 0) != 0;
  Workspace* ws_;
  // Keyed by (N, C, H, W, M, kH, kW, bias): with the op's fixed arguments that fixes the whole geometry.
  std::map<std::vector<int64_t>, std::unique_ptr<Plan>> plans_;
  std::vector<char> channel_parts_;  // RunInParts' channel parts' outputs
  DataType dtype_ = DataType::Float;  // this run's: float32 or bfloat16
  std::unique_ptr<OperatorBase> fallback_;
  WinogradF43Conv own_winograd_;  // where oneDNN has no Winograd kernel (conv_winograd_f43.h)
};

}  // namespace

REGISTER_CPU_OPERATOR_WITH_ENGINE(Conv, DNNL, DnnlConvOp);

// Reduced-precision inference (core/reduced_precision.h): X, filter, bias and a fused residual in
// bfloat16, Y bfloat16. 2-D convolutions only (the others run the default kernels, float32 only).
REGISTER_REDUCED_PRECISION_KERNEL(Conv, CPU, "DNNL",
                                  {{DataType::BFloat16}, -1, false, [](const caffe2::OperatorDef& op, DataType) {
                                     const ArgumentHelper a(op);
                                     return dnnl_util::Bf16Supported() && a.GetSingleArgument<int>("legacy_pad", 0) == 0 &&
                                            (!a.HasArgument("kernels") || a.GetRepeatedArgument<int>("kernels").size() == 2);
                                   }});

}  // namespace hetnet
