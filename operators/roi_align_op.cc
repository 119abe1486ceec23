#include "operators/roi_align_op.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/checked_size.h"
#include "core/op_schema.h"

namespace hetnet {

RoiAlignOp::RoiAlignOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      out_h_(GetSingleArgument<int64_t>("output_height", 1)),
      out_w_(GetSingleArgument<int64_t>("output_width", 1)),
      sampling_ratio_(GetSingleArgument<int64_t>("sampling_ratio", 0)),
      spatial_scale_(GetSingleArgument<float>("spatial_scale", 1.f)) {
  const std::string ct = GetSingleArgument<std::string>("coordinate_transformation_mode", "half_pixel");
  const std::string mode = GetSingleArgument<std::string>("mode", "avg");
  HN_ENFORCE(ct == "half_pixel" || ct == "output_half_pixel", def.type(), ": coordinate_transformation_mode '", ct,
             "'; half_pixel or output_half_pixel is required");
  HN_ENFORCE(mode == "avg" || mode == "max", def.type(), ": mode '", mode, "'; avg or max is required");
  half_pixel_ = ct == "half_pixel";
  max_ = mode == "max";
  HN_ENFORCE(out_h_ > 0 && out_w_ > 0 && sampling_ratio_ >= 0 && std::isfinite(spatial_scale_), def.type(),
             ": output_height/width must be positive, sampling_ratio >= 0, spatial_scale finite");
}

void RoiAlignOp::RunOnDevice() {
  const DataType t = Input(0).dtype();
  HN_ENFORCE(Input(1).dtype() == t, type(), ": rois ('", def().input(1), "') is ", DataTypeName(Input(1).dtype()),
             " but X ('", def().input(0), "') is ", DataTypeName(t));
  if (t == DataType::Float) return Compute<float>();
  HN_ENFORCE(t == DataType::Double, type(), ": X ('", def().input(0), "') is ", DataTypeName(t),
             "; float32 or float64 is required");
  Compute<double>();
}

template <typename T>
void RoiAlignOp::Compute() {
  const Tensor &X = Input(0), &Rois = Input(1), &Idx = Input(2);
  HN_ENFORCE(X.ndim() == 4, type(), ": X ('", def().input(0), "') has shape ", X.ShapeString(), "; [N, C, H, W]");
  HN_ENFORCE(Rois.ndim() == 2 && Rois.dim(1) == 4, type(), ": rois ('", def().input(1), "') has shape ",
             Rois.ShapeString(), "; [num_rois, 4] is required");
  const int64_t N = X.dim(0), C = X.dim(1), H = X.dim(2), W = X.dim(3), R = Rois.dim(0);
  HN_ENFORCE(Idx.dtype() == DataType::Int64 && Idx.ndim() == 1 && Idx.dim(0) == R, type(), ": batch_indices ('",
             def().input(2), "') is ", DataTypeName(Idx.dtype()), " ", Idx.ShapeString(), "; int64 [", R, "] is required");
  const T *x = X.data<T>(), *rois = Rois.data<T>();
  const int64_t* bi = Idx.data<int64_t>();
  T* y = Output(0, {R, C, out_h_, out_w_}, X.dtype())->template mutable_data<T>();
  CheckedNumel({R, C, out_h_, out_w_}, "RoiAlign Y");
  struct Sample {
    int64_t pos[4];
    double w[4];
  };
  std::vector<Sample> samples;
  for (int64_t r = 0; r < R; ++r) {
    HN_ENFORCE(bi[r] >= 0 && bi[r] < N, type(), ": batch_indices ('", def().input(2), "') holds ", bi[r],
               ", outside [0, ", N, ")");
    const double off = half_pixel_ ? 0.5 : 0.0, s = spatial_scale_;
    const double x1 = rois[r * 4] * s - off, y1 = rois[r * 4 + 1] * s - off;
    double rw = rois[r * 4 + 2] * s - off - x1, rh = rois[r * 4 + 3] * s - off - y1;
    if (!half_pixel_) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    const double bh = rh / static_cast<double>(out_h_), bw = rw / static_cast<double>(out_w_);
    // Samples per bin side (checked as doubles before the cast: a huge or NaN roi must not overflow it).
    const double dh = sampling_ratio_ > 0 ? static_cast<double>(sampling_ratio_) : std::ceil(bh);
    const double dw = sampling_ratio_ > 0 ? static_cast<double>(sampling_ratio_) : std::ceil(bw);
    HN_ENFORCE(!(dh > 65536) && !(dw > 65536), type(), ": roi ", r, " needs ", dh, " x ", dw,
               " samples per bin (over 65536 a side)");
    const int64_t gh = dh > 0 ? static_cast<int64_t>(dh) : 0, gw = dw > 0 ? static_cast<int64_t>(dw) : 0;
    const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
    for (int64_t ph = 0; ph < out_h_; ++ph)
      for (int64_t pw = 0; pw < out_w_; ++pw) {
        samples.clear();
        for (int64_t iy = 0; iy < gh; ++iy)
          for (int64_t ix = 0; ix < gw; ++ix) {
            double yy = y1 + ph * bh + (iy + 0.5) * bh / gh, xx = x1 + pw * bw + (ix + 0.5) * bw / gw;
            Sample sm{{0, 0, 0, 0}, {0, 0, 0, 0}};
            if (!(yy < -1.0 || yy > H || xx < -1.0 || xx > W)) {
              yy = std::max(yy, 0.0), xx = std::max(xx, 0.0);
              int64_t yl = static_cast<int64_t>(yy), xl = static_cast<int64_t>(xx), yh, xh;
              if (yl >= H - 1) yh = yl = H - 1, yy = static_cast<double>(yl);
              else yh = yl + 1;
              if (xl >= W - 1) xh = xl = W - 1, xx = static_cast<double>(xl);
              else xh = xl + 1;
              const double ly = yy - yl, lx = xx - xl, hy = 1 - ly, hx = 1 - lx;
              sm = Sample{{yl * W + xl, yl * W + xh, yh * W + xl, yh * W + xh}, {hy * hx, hy * lx, ly * hx, ly * lx}};
            }
            samples.push_back(sm);
          }
        for (int64_t c = 0; c < C; ++c) {
          const T* plane = x + (bi[r] * C + c) * H * W;
          double v = 0;
          for (size_t k = 0; k < samples.size(); ++k) {
            const Sample& sm = samples[k];
            if (max_) {
              double m = sm.w[0] * plane[sm.pos[0]];
              for (int q = 1; q < 4; ++q) m = std::max(m, sm.w[q] * static_cast<double>(plane[sm.pos[q]]));
              v = k == 0 ? m : std::max(v, m);
            } else {
              for (int q = 0; q < 4; ++q) v += sm.w[q] * static_cast<double>(plane[sm.pos[q]]);
            }
          }
          y[((r * C + c) * out_h_ + ph) * out_w_ + pw] = static_cast<T>(max_ ? v : v / count);
        }
      }
  }
}

OPERATOR_SCHEMA(RoiAlign).NumInputs(3).NumOutputs(1)
    .SetDoc("ONNX's RoiAlign: bilinear-sampled avg/max pooling of each roi into output_height x output_width bins, "
            "half_pixel or output_half_pixel coordinates, sampling_ratio, spatial_scale. float32/64. CPU only.");
REGISTER_CPU_OPERATOR(RoiAlign, RoiAlignOp);

}  // namespace hetnet
