// Conv, PACKED engine: a channels-last convolution as one GEMM per image on hetnet's packed GEMM
// (device/cpu_packed_gemm.h), Y[pixels, M] = im2col(X)[pixels, kH kW C] x filter^T, the filter packed
// once per version and shared by every instance (device/prepared_weights.h), bias, residual and
// fused Relu applied in the GEMM's store. 1x1 stride-1 unpadded convolutions read X in place.
// Chosen for inference nets by the inference rewrite (core/inference_fusion.h) for the Conv ops that
// the channels-last pass gave to DNNL. Why: on the AVX2 host (a Zen 3 EPYC) oneDNN 2.6 has only its
// direct jit:avx2 kernel for these (no brgemm, no Winograd), which ran ResNet-18's 3x3 layers at
// 42-58 GFLOP/s on one core, where the packed GEMM's tiles run at 77-86 (benchmarks/RESULTS.md,
// eighteenth session).
// What it does not run goes to the DNNL engine with the same arguments (operators/conv_op_dnnl.cc):
// CPUs with AVX-512F (oneDNN's brgemm and Winograd kernels there; this engine was not measured
// against them), NCHW activations, groups, other dtypes, a residual that broadcasts, empty tensors,
// filters rewritten between runs (training), and the shapes measured faster on oneDNN (Prefer()).
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/inference_fusion.h"
#include "core/operator.h"
#include "core/workspace.h"
#include "device/cpu_packed_conv.h"
#include "device/cpu_packed_gemm.h"
#include "device/math.h"
#include "operators/conv_op.h"
#include "operators/conv_pool_shape.h"

namespace hetnet {
namespace {

class PackedConvOp final : public Operator<CPUContext> {
 public:
  PackedConvOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        args_(ParseConvPoolArgs(def, ConvPoolKind::Conv, /*allow_channels_last=*/true)),
        relu_(FusedReluArgument(def)),
        residual_(def),
        ws_(ws) {}

  void RunOnDevice() override {
    if (!Usable()) return RunFallback();
    const Tensor& X = Input(0);
    const Tensor& F = Input(1);
    const bool has_bias = InputSize() >= 3;
    const ConvPoolGeom g = ComputeConvPoolGeom(def(), ConvPoolKind::Conv, args_, X.shape(), &F.shape(),
                                               has_bias ? &Input(2).shape() : nullptr);
    const bool sum = residual_.present() && Input(3).shape() == g.y_shape();
    if (!g.channels_last || g.group != 1 || g.N == 0 || g.OH <= 0 || g.OW <= 0 || g.C == 0 || g.M == 0 ||
        (residual_.present() && !sum) || !Prefer(g) || WrittenBetweenRuns(F))
      return RunFallback();
    const int64_t taps = int64_t{g.kh} * g.kw, K = taps * g.C, pixels = g.OH * g.OW;
    const float* f = F.data<float>();
    // The filter as [M, C, taps] (hetnet's activation_order NHWC keeps it NCHW) or, Caffe2's order
    // NHWC, [M, taps, C]: already B^T, K in im2col's order.
    const cpu_gemm::PackSource source{false, K, g.M, g.filter_hwc ? 0 : taps};
    const cpu_gemm::PackedMatrix& packed = weight_.Get(F, source, cpu_gemm::PackedWeightCache(), [&] {
      return g.filter_hwc ? cpu_gemm::PackedMatrix::FromTransposed(f, g.M, K)
                          : cpu_gemm::PackedMatrix::FromFilterCS(f, g.M, g.C, taps);
    });
    if (Output(0)->SharesStorageWith(residual_.present() ? Input(3) : X)) *Output(0) = Tensor();  // a DNNL run's swap
    Tensor* Y = Output(0, g.y_shape(), DataType::Float);
    float* y = Y->mutable_data<float>();
    if (sum) std::memcpy(y, Input(3).data<float>(), Y->nbytes());
    const cpu_gemm::ConvShape shape{g.H, g.W, g.C, g.OH, g.OW, g.kh, g.kw, g.sh, g.sw, g.dh, g.dw, g.pt, g.pl};
    const float* bias = has_bias ? Input(2).data<float>() : nullptr;
    for (int64_t n = 0; n < g.N; ++n)
      cpu_gemm::ConvPacked(shape, X.data<float>() + n * g.H * g.W * g.C, packed, bias, relu_, y + n * pixels * g.M, sum,
                           math::CpuWorkers());
  }

 private:
  bool Usable() const {
    // Measured against oneDNN on an AVX2 CPU only: AVX-512 CPUs keep oneDNN's kernels.
    if (!cpu_gemm::GatherSupported() || std::string(cpu_gemm::TileIsa()) != "avx2") return false;
    for (int i = 0; i < InputSize(); ++i)
      if (Input(i).dtype() != DataType::Float) return false;
    return true;
  }

  // Shapes where oneDNN's kernel was measured faster: 1x1 (its jit_1x1 kernel) and few input
  // channels (ResNet's first 7x7 layer on 3 channels: 29 against 77 GFLOP/s; LeNet's second layer,
  // 5x5 on 20 channels: 20 k steps per tap, LeNet at batch 64 0.90x).
  static bool Prefer(const ConvPoolGeom& g) { return g.kh * g.kw > 1 && g.C >= 64; }

  // As the PACKED FC's: true from the second run in a row that finds the filter rewritten since the
  // run before (training), when repacking would cost more than packing saves.
  bool WrittenBetweenRuns(const Tensor& F) {
    const uint64_t id = F.storage_id(), generation = F.write_generation();
    written_runs_ = id == last_id_ && generation != last_generation_ ? written_runs_ + 1 : 0;
    last_id_ = id;
    last_generation_ = generation;
    if (written_runs_ >= 2) weight_.Reset();
    return written_runs_ >= 2;
  }

  void RunFallback() {
    if (!fallback_) {
      caffe2::OperatorDef def = this->def();
      def.set_engine("DNNL");  // absent from the build: the default kernels (ResolveEngine)
      fallback_ = CreateOperator(def, ws_);
    }
    fallback_->Run();
  }

  ConvPoolArgs args_;
  bool relu_;
  ConvResidual residual_;
  Workspace* ws_;
  PreparedWeight<cpu_gemm::PackSource, cpu_gemm::PackedMatrix> weight_;
  uint64_t last_id_ = 0, last_generation_ = 0;
  int written_runs_ = 0;
  std::unique_ptr<OperatorBase> fallback_;
};

}  // namespace

REGISTER_CPU_OPERATOR_WITH_ENGINE(Conv, PACKED, PackedConvOp);

}  // namespace hetnet
