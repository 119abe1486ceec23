#include "operators/onnx_mel_weight_matrix_op.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "core/checked_size.h"
#include "core/gradient.h"
#include "core/op_schema.h"
#include "operators/onnx_op_util.h"

namespace hetnet {

namespace {
// 2595 * log1p(hz / 700) in T (numpy's float32 or float64 steps), then / ln(10) in float64.
template <typename T>
double HertzToMel(double hz) {
  const T ratio = static_cast<T>(static_cast<T>(hz) / static_cast<T>(700));
  const T v = static_cast<T>(2595) * static_cast<T>(std::log1p(ratio));
  return static_cast<double>(v) / std::log(10.0);
}
// numpy's floor_divide of doubles (b > 0): (a - fmod(a, b)) / b, floored, corrected when that quotient rounded down.
double FloorDivide(double a, double b) {
  const double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && mod < 0) div -= 1;
  double fl = std::floor(div);
  if (div - fl > 0.5) fl += 1;
  return fl;
}
}  // namespace

void OnnxMelWeightMatrixOp::RunOnDevice() {
  int64_t v[3];
  for (int i = 0; i < 3; ++i) {
    EnforceIndexInput(*this, i);
    HN_ENFORCE(Input(i).numel() == 1, type(), ": input ", i, " ('", def().input(i),
               "') must hold one value, has shape ", Input(i).ShapeString());
    v[i] = IndexAt(Input(i), 0);
  }
  const int64_t mels = v[0], dft_length = v[1], rate = v[2];
  HN_ENFORCE(mels >= 1 && mels <= (int64_t{1} << 24) && dft_length >= 1 && dft_length <= (int64_t{1} << 30) &&
                 rate >= 1,
             type(), ": num_mel_bins ", mels, " ('", def().input(0), "'), dft_length ", dft_length, " ('",
             def().input(1), "') and sample_rate ", rate, " ('", def().input(2), "') must be positive (and sized)");
  const DataType et = Input(3).dtype();
  HN_ENFORCE((et == DataType::Float || et == DataType::Double) && Input(4).dtype() == et && Input(3).numel() == 1 &&
                 Input(4).numel() == 1,
             type(), ": lower_edge_hertz ('", def().input(3), "') and upper_edge_hertz ('", def().input(4),
             "') must be one float32 or float64 value each, of one dtype");
  const double lo = ScalarInput(*this, 3), hi = ScalarInput(*this, 4);
  const bool f32 = et == DataType::Float;
  const double lo_mel = f32 ? HertzToMel<float>(lo) : HertzToMel<double>(lo);
  const double hi_mel = f32 ? HertzToMel<float>(hi) : HertzToMel<double>(hi);
  const double step = (hi_mel - lo_mel) / static_cast<double>(mels + 2);
  const int64_t spectrum = dft_length / 2 + 1;
  std::vector<int64_t> bin(mels + 2);
  for (int64_t i = 0; i < mels + 2; ++i) {
    const double hz = 700 * std::expm1((static_cast<double>(i) * step + lo_mel) / 2595 * std::log(10.0));
    const double b = FloorDivide(static_cast<double>(dft_length + 1) * hz, static_cast<double>(rate));
    HN_ENFORCE(b >= 0 && b < static_cast<double>(spectrum), type(), ": mel point ", i, " falls in DFT bin ", b,
               ", outside [0, ", spectrum, ") (edges ", lo, " to ", hi, " Hz at sample_rate ", rate, ")");
    bin[i] = static_cast<int64_t>(b);
  }
  std::vector<double> w(static_cast<size_t>(CheckedNumel({spectrum, mels}, "MelWeightMatrix output")), 0.0);
  for (int64_t i = 0; i < mels; ++i) {
    const int64_t left = bin[i], center = bin[i + 1], right = bin[i + 2];
    if (center == left) w[center * mels + i] = 1;
    for (int64_t j = left; center > left && j <= center; ++j)
      w[j * mels + i] = static_cast<double>(j - left) / static_cast<double>(center - left);
    for (int64_t j = center; j < right; ++j)
      w[j * mels + i] = static_cast<double>(right - j) / static_cast<double>(right - center);
  }
  const int dt = GetSingleArgument<int>("dtype", static_cast<int>(DataType::Float));
  HN_ENFORCE(IsKnownDataType(dt) && dt != 0 && static_cast<DataType>(dt) != DataType::String, type(), ": arg dtype ",
             dt, " is not a numeric data type");
  const DataType t = static_cast<DataType>(dt);
  Tensor* Y = Output(0, {spectrum, mels}, t);
  const size_t item = ItemSize(t);
  char* y = static_cast<char*>(Y->raw_mutable_data(t));
  for (size_t i = 0; i < w.size(); ++i) {
    char bytes[16] = {};
    EncodeAs(*this, t, w[i], bytes);
    std::memcpy(y + i * item, bytes, item);
  }
}

OPERATOR_SCHEMA(OnnxMelWeightMatrix).NumInputs(5).NumOutputs(1)
    .SetDoc("ONNX's MelWeightMatrix (as its reference): [dft_length / 2 + 1, num_mel_bins] triangular mel filters; "
            "arg dtype (default float32). CPU only; no gradient.");
REGISTER_CPU_OPERATOR(OnnxMelWeightMatrix, OnnxMelWeightMatrixOp);
NO_GRADIENT(OnnxMelWeightMatrix);

}  // namespace hetnet
