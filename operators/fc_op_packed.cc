// FC and FCTransposed, PACKED engine: hetnet's own GEMM with the weights packed once into 32-column
// panels (device/cpu_packed_gemm.h), bias and fused Relu applied in the kernel's store. Chosen for
// inference nets by the inference rewrite (core/inference_fusion.h) where DNNL would run: measured
// faster than oneDNN's inner product on the FC shapes with more than one row (benchmarks/RESULTS.md);
// HETNET_CPU_ENGINE=PACKED,DNNL makes it the default everywhere. Same arguments, checks and messages as FCOp /
// FCTransposedOp. The packed weight is kept per weight version and shared by every instance
// (device/prepared_weights.h), so a weight written in place (an optimizer step, FeedBlob) is repacked
// at the next run.
// Single rows (M = 1, batch-1 serving) run a matrix-vector kernel on the same panels: one contiguous
// stream per panel, faster than Eigen's GEMV on the plain layout (benchmarks/RESULTS.md).
// What it does not run goes to the engine the CPU default would pick next (DNNL, else the default
// kernels): other dtypes, CPUs without AVX-512F or AVX2+FMA, and weights rewritten before every run (training).
#include <memory>

#include "device/cpu_packed_gemm.h"
#include "operators/fc_engine_op.h"

namespace hetnet {
namespace {

template <bool kTransposed>
class PackedFCOp final : public CpuFCEngineOp<kTransposed> {
  using Base = CpuFCEngineOp<kTransposed>;
  using Base::Input;
  using Base::Output;

 public:
  using Base::Base;

  void RunOnDevice() override {
    if (!cpu_gemm::Supported() || !this->FloatInputs()) return RunFallback();
    const Tensor& X = Input(0);
    const Tensor& W = Input(1);
    const Tensor& b = Input(2);
    const FCDims d = this->Dims();
    if (d.M == 0 || d.N == 0 || WrittenBetweenRuns(W)) return RunFallback();
    const cpu_gemm::PackedMatrix& packed = Packed(W, d.K, d.N);
    Tensor* Y = Output(0, d.y_shape, DataType::Float);
    cpu_gemm::GemmPacked(d.M, X.data<float>(), d.K, packed, b.data<float>(), this->relu_, Y->mutable_data<float>(), d.N,
                         math::CpuWorkers());
  }

 private:
  // True from the second run in a row that finds W rewritten since the run before (training: an
  // optimizer updates it every iteration), when repacking would cost more than packing saves (a
  // 512 x 784 pack is about half a batch-64 GEMM). Storage owned elsewhere is not tracked (its
  // writes are seen only by the prepared weight's checksum).
  bool WrittenBetweenRuns(const Tensor& W) {
    const uint64_t id = W.storage_id(), generation = W.write_generation();
    written_runs_ = id == last_id_ && generation != last_generation_ ? written_runs_ + 1 : 0;
    last_id_ = id;
    last_generation_ = generation;
    if (written_runs_ >= 2) weight_.Reset();  // let the stale packed copy go
    return written_runs_ >= 2;
  }

  // A constant W is packed when the net is created (B's K and N from W's shape at axis_w).
  bool PrepareConstantInputs(const std::vector<bool>& constant) override {
    if (this->InputSize() < 2 || !constant[1] || !cpu_gemm::Supported()) return false;
    const Tensor& W = Input(1);
    const int rank = static_cast<int>(W.ndim());
    int axis_w = this->axis_w_ < 0 ? this->axis_w_ + rank : this->axis_w_;
    if (W.dtype() != DataType::Float || axis_w < 0 || axis_w > rank || W.numel() == 0) return false;
    int64_t rows = 1;  // W's leading dims: N for FC ([N, K]), K for FCTransposed ([K, N])
    for (int i = 0; i < axis_w; ++i) rows *= W.dim(i);
    const int64_t cols = W.numel() / rows;
    if (kTransposed) Packed(W, rows, cols);
    else Packed(W, cols, rows);
    return false;  // Y is the run's
  }

  // B = W (FCTransposed) or W^T (FC) of [K, N], packed once per version of W.
  const cpu_gemm::PackedMatrix& Packed(const Tensor& W, int64_t K, int64_t N) {
    const float* w = W.data<float>();
    return weight_.Get(W, cpu_gemm::PackSource{kTransposed, K, N}, cpu_gemm::PackedWeightCache(), [&] {
      return kTransposed ? cpu_gemm::PackedMatrix::FromRowMajor(w, K, N) : cpu_gemm::PackedMatrix::FromTransposed(w, N, K);
    });
  }

  void RunFallback() {
    Base::RunFallback([this] {
      caffe2::OperatorDef def = this->def();
      def.set_engine("DNNL");  // absent from the build: the default kernels (ResolveEngine)
      return CreateOperator(def, this->ws_);
    });
  }

  PreparedWeight<cpu_gemm::PackSource, cpu_gemm::PackedMatrix> weight_;
  uint64_t last_id_ = 0, last_generation_ = 0;
  int written_runs_ = 0;
};

}  // namespace

REGISTER_CPU_OPERATOR_WITH_ENGINE(FC, PACKED, PackedFCOp<false>);
REGISTER_CPU_OPERATOR_WITH_ENGINE(FCTransposed, PACKED, PackedFCOp<true>);

}  // namespace hetnet
