#include "operators/onnx_scan_op.h"

#include <string>

#include "core/gradient.h"

namespace hetnet {

namespace {

// values of arg `name` (or `count` zeros), each 0 or 1 when `binary`.
std::vector<int64_t> PerItem(const OperatorBase& op, const std::string& name, int count, bool binary) {
  auto v = op.GetRepeatedArgument<int64_t>(name);
  if (v.empty()) v.assign(count, 0);
  HN_CHECK_KIND(kInvalidArgument, static_cast<int>(v.size()) == count, op.type(), " '", op.def().name(), "': ", name,
                " has ", v.size(), " values, expected ", count);
  for (int64_t x : v)
    HN_CHECK_KIND(kInvalidArgument, !binary || x == 0 || x == 1, op.type(), " '", op.def().name(), "': ", name,
                  " values must be 0 (forward) or 1 (reverse), got ", x);
  return v;
}

}  // namespace

OnnxScanOp::OnnxScanOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      num_states_(OnnxCountArg(*this, "num_states")),
      num_scan_inputs_(OnnxCountArg(*this, "num_scan_inputs")),
      batched_(GetSingleArgument<int64_t>("batched", 0) != 0),
      body_(*this, ws, "body", num_states_ + num_scan_inputs_) {
  HN_CHECK_KIND(kInvalidArgument, num_states_ >= 0 && num_states_ <= OutputSize() && num_scan_inputs_ >= 1 &&
                                      num_states_ + num_scan_inputs_ <= InputSize(),
                type(), " '", def.name(), "': num_states ", num_states_, " and num_scan_inputs ", num_scan_inputs_,
                " do not fit ", InputSize(), " inputs and ", OutputSize(), " outputs");
  const int num_scan_outputs = OutputSize() - num_states_;
  in_axes_ = PerItem(*this, "scan_input_axes", num_scan_inputs_, false);
  in_dirs_ = PerItem(*this, "scan_input_directions", num_scan_inputs_, true);
  out_axes_ = PerItem(*this, "scan_output_axes", num_scan_outputs, false);
  out_dirs_ = PerItem(*this, "scan_output_directions", num_scan_outputs, true);
  HN_CHECK_KIND(kInvalidArgument, body_.num_locals() == num_states_ + num_scan_inputs_, type(), " '", def.name(),
                "': the body has ", body_.num_locals(), " inputs, expected ", num_states_ + num_scan_inputs_,
                " (states, then one per scan input)");
  HN_CHECK_KIND(kInvalidArgument, body_.num_outputs() == OutputSize(), type(), " '", def.name(), "': the body has ",
                body_.num_outputs(), " outputs, expected ", OutputSize(), " (states, then scan outputs)");
}

void OnnxScanOp::RunOnDevice() {
  const int num_in = num_states_ + num_scan_inputs_;
  std::vector<const Tensor*> in;
  std::vector<Tensor> out(OutputSize());
  if (!batched_) {
    for (int i = 0; i < num_in; ++i) in.push_back(&Input(i));
    ScanOnce(in, &out);
    for (int i = 0; i < OutputSize(); ++i) Output(i)->CopyFrom(out[i]);
    return;
  }
  const int64_t batch = Input(0).ndim() ? Input(0).dim(0) : -1;
  for (int i = 0; i < num_in; ++i)
    HN_CHECK_KIND(kInvalidArgument, Input(i).ndim() >= 1 && Input(i).dim(0) == batch, type(), " '", def().name(),
                  "': input '", def().input(i), "' of shape ", ShapeToString(Input(i).shape()),
                  " does not have the batch size of '", def().input(0), "' (", batch, ") on axis 0");
  std::vector<Tensor> slices(num_in);
  std::vector<std::vector<Tensor>> parts(OutputSize());
  for (int i = 0; i < num_in; ++i) in.push_back(&slices[i]);
  for (int64_t b = 0; b < batch; ++b) {
    for (int i = 0; i < num_in; ++i) SliceOnnxAxis(Input(i), 0, b, &slices[i]);
    ScanOnce(in, &out);
    for (int i = 0; i < OutputSize(); ++i) parts[i].push_back(std::move(out[i])), out[i] = Tensor();
  }
  for (int i = 0; i < OutputSize(); ++i)
    StackOnnxParts(*this, parts[i], 0, false, "output '" + def().output(i) + "'", Output(i));
}

void OnnxScanOp::ScanOnce(const std::vector<const Tensor*>& in, std::vector<Tensor>* out) {
  const int n = num_states_, m = num_scan_inputs_, num_scan_outputs = OutputSize() - n;
  int64_t length = -1;
  std::vector<int> axes(m);
  for (int j = 0; j < m; ++j) {
    const Tensor& x = *in[n + j];
    const int64_t a = in_axes_[j] < 0 ? in_axes_[j] + x.ndim() : in_axes_[j];
    HN_CHECK_KIND(kInvalidArgument, a >= 0 && a < x.ndim(), type(), " '", def().name(), "': scan_input_axes ",
                  in_axes_[j], " is out of range for scan input '", def().input(n + j), "' of shape ",
                  ShapeToString(x.shape()), batched_ ? " (without its batch axis)" : "");
    axes[j] = static_cast<int>(a);
    if (length < 0) length = x.dim(axes[j]);
    HN_CHECK_KIND(kInvalidArgument, x.dim(axes[j]) == length, type(), " '", def().name(), "': scan input '",
                  def().input(n + j), "' has length ", x.dim(axes[j]), " along axis ", a, ", scan input '",
                  def().input(n), "' has ", length);
  }
  for (int j = 0; j < n; ++j) body_.Local(j)->CopyFrom(*in[j]);
  std::vector<std::vector<Tensor>> scans(num_scan_outputs);
  std::vector<Tensor> next(n);
  for (int64_t t = 0; t < length; ++t) {
    for (int j = 0; j < m; ++j) SliceOnnxAxis(*in[n + j], axes[j], in_dirs_[j] ? length - 1 - t : t, body_.Local(n + j));
    body_.Run();
    for (int j = 0; j < n; ++j) next[j].CopyFrom(body_.Output(j));
    for (int k = 0; k < num_scan_outputs; ++k) {
      scans[k].emplace_back();
      scans[k].back().CopyFrom(body_.Output(n + k));
    }
    for (int j = 0; j < n; ++j) body_.Local(j)->ShareData(next[j]), next[j] = Tensor();
  }
  for (int j = 0; j < n; ++j) (*out)[j].CopyFrom(*body_.Local(j));
  for (int k = 0; k < num_scan_outputs; ++k) {
    const int rank = scans[k].empty() ? 0 : scans[k][0].ndim();
    const int64_t axis = out_axes_[k] < 0 ? out_axes_[k] + rank + 1 : out_axes_[k];
    StackOnnxParts(*this, scans[k], static_cast<int>(axis), out_dirs_[k] != 0,
                   "scan output '" + def().output(n + k) + "'", &(*out)[n + k]);
  }
}

OPERATOR_SCHEMA(OnnxScan)
    .NumInputs(1, 1 << 30)
    .NumOutputs(0, 1 << 30)
    .SetDoc("ONNX Scan (opset 9+): runs the NetDef argument body once per slice of the scan inputs in a child "
            "workspace, carrying states and stacking scan outputs (axes and directions per input/output).");
REGISTER_CPU_OPERATOR(OnnxScan, OnnxScanOp);
NO_GRADIENT(OnnxScan);

}  // namespace hetnet
