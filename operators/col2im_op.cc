#include "operators/col2im_op.h"

#include "core/checked_size.h"
#include "operators/onnx_op_util.h"
#include "operators/onnx_pool_op.h"

namespace hetnet {

void Col2ImOp::RunOnDevice() {
  const Tensor& X = Input(0);
  HN_ENFORCE(X.dtype() == DataType::Float || X.dtype() == DataType::Double, type(), ": input 0 ('", def().input(0),
             "') is ", DataTypeName(X.dtype()), "; float32 or float64 is required");
  HN_ENFORCE(X.ndim() == 3, type(), ": input 0 ('", def().input(0), "') has shape ", X.ShapeString(),
             "; [N, C * prod(block_shape), L] is required");
  std::vector<int64_t> image, block;
  for (int i : {1, 2}) {
    EnforceIndexInput(*this, i);
    const Tensor& t = Input(i);
    HN_ENFORCE(t.ndim() == 1, type(), ": input ", i, " ('", def().input(i), "') must be 1-D");
    for (int64_t k = 0; k < t.numel(); ++k) (i == 1 ? image : block).push_back(IndexAt(t, k));
  }
  const int k = static_cast<int>(image.size());
  HN_ENFORCE(k >= 1 && static_cast<int>(block.size()) == k, type(), ": image_shape ('", def().input(1), "') and ",
             "block_shape ('", def().input(2), "') need one value per spatial dim each");
  const auto strides = GetRepeatedArgument<int64_t>("strides", std::vector<int64_t>(k, 1)),
             dil = GetRepeatedArgument<int64_t>("dilations", std::vector<int64_t>(k, 1)),
             pads = GetRepeatedArgument<int64_t>("pads", std::vector<int64_t>(2 * k, 0));
  HN_ENFORCE(static_cast<int>(strides.size()) == k && static_cast<int>(dil.size()) == k &&
                 static_cast<int>(pads.size()) == 2 * k,
             type(), ": strides, dilations (", k, " values each) and pads (", 2 * k, ") must match block_shape");
  int64_t taps = 1, grid = 1;
  std::vector<int64_t> cells(k), begin(k);
  for (int i = 0; i < k; ++i) {
    HN_ENFORCE(image[i] >= 1 && block[i] >= 1 && block[i] <= (int64_t{1} << 20) && strides[i] >= 1 &&
                   strides[i] <= (int64_t{1} << 30) && dil[i] >= 1 && dil[i] <= (int64_t{1} << 30) && pads[i] >= 0 &&
                   pads[k + i] >= 0 && pads[i] <= (int64_t{1} << 30) && pads[k + i] <= (int64_t{1} << 30),
               type(), ": image_shape / block_shape / strides / dilations / pads out of range for dim ", i);
    const WindowDim w = ComputeWindowDim(*this, i, image[i], block[i], strides[i], dil[i], pads[i], pads[k + i],
                                         "NOTSET", false);
    cells[i] = w.out, begin[i] = w.pad_begin;
    taps = CheckedMul(taps, block[i], "Col2Im block"), grid = CheckedMul(grid, w.out, "Col2Im grid");
  }
  const int64_t N = X.dim(0), rows = X.dim(1), L = X.dim(2);
  HN_ENFORCE(rows % taps == 0 && L == grid, type(), ": input 0 ('", def().input(0), "') has shape ", X.ShapeString(),
             "; block_shape gives ", taps, " rows per channel and the sliding grid ", grid, " columns");
  const int64_t C = rows / taps;
  std::vector<int64_t> shape = {N, C};
  shape.insert(shape.end(), image.begin(), image.end());
  CheckedNumel(shape, "Col2Im output");
  Tensor* Y = Output(0, shape, X.dtype());
  int64_t spatial = 1;
  for (int64_t v : image) spatial *= v;
  std::vector<double> acc(Y->numel(), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t t = 0; t < taps; ++t)
        for (int64_t l = 0; l < L; ++l) {
          int64_t flat = 0;
          bool inside = true;
          for (int64_t i = k - 1, rt = t, rl = l, stride = 1; i >= 0; --i) {
            const int64_t j = rt % block[i], g = rl % cells[i];
            rt /= block[i], rl /= cells[i];
            const int64_t p = g * strides[i] - begin[i] + j * dil[i];
            inside &= p >= 0 && p < image[i];
            flat += p * stride, stride *= image[i];
          }
          if (inside) acc[(n * C + c) * spatial + flat] += ElementAsDouble(*this, X, 0, ((n * rows) + c * taps + t) * L + l);
        }
  for (int64_t e = 0; e < Y->numel(); ++e) {
    if (X.dtype() == DataType::Float) Y->mutable_data<float>()[e] = static_cast<float>(acc[e]);
    else Y->mutable_data<double>()[e] = acc[e];
  }
}

OPERATOR_SCHEMA(Col2Im).NumInputs(3).NumOutputs(1)
    .SetDoc("ONNX's Col2Im(X, image_shape, block_shape) -> Y: im2col columns summed back into images; args "
            "dilations, pads, strides. float32/64. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(Col2Im, Col2ImOp);

}  // namespace hetnet
