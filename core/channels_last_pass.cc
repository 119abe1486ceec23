#include "core/channels_last_pass.h"

#include "core/argument.h"
#include "core/blob_form_pass.h"
#include "core/error.h"
#include "core/operator.h"
#include "core/reduced_precision.h"

namespace hetnet {
namespace {

enum class Role { kOther, kConv, kPool, kElementwise };

// Where an op runs: the CPU, a GPU of a float16 net, or somewhere this pass leaves alone.
enum class Place { kNone, kCpu, kGpu };

Device DeviceOf(const caffe2::OperatorDef& op, const caffe2::NetDef& net) {
  return DeviceFromOption(op.has_device_option() ? op.device_option() : net.device_option());
}

// The GPU only in float16 nets: cuDNN's float16 tensor-core kernels want NHWC (NCHW float16 ran
// ResNet-50's convolutions slower than float32 on an H100), while float32 keeps the measured NCHW
// kernels and the per-shape choice of cuDNN or the default engine, which has no NHWC kernel.
bool GpuTakesNhwc(const caffe2::NetDef& net) {
  try {
    return NetPrecision(net) == DataType::Float16;
  } catch (const Error&) {
    return false;  // the rewriter reports the bad precision
  }
}

struct NetView {
  const caffe2::NetDef& net;
  bool gpu_nhwc;  // GpuTakesNhwc(net)
};

Place PlaceOf(const caffe2::OperatorDef& op, const NetView& v) {
  try {
    const Device d = DeviceOf(op, v.net);
    if (d.is_cpu()) return Place::kCpu;
    return d.type == DeviceType::CUDA && v.gpu_nhwc ? Place::kGpu : Place::kNone;
  } catch (const Error&) {
    return Place::kNone;  // placement reports the bad device
  }
}

bool ArgIs(const ArgumentHelper& a, const char* name, const std::string& value) {
  return !a.HasArgument(name) || a.GetSingleArgument<std::string>(name, "") == value;
}

// cuDNN pads symmetrically only: explicit pads with t == b and l == r, and no legacy padding that
// may add one at the end (SAME, CAFFE_LEGACY_POOLING).
bool PadsAlwaysSymmetric(const ArgumentHelper& a) {
  const int legacy = a.GetSingleArgument<int>("legacy_pad", 0);
  if (legacy != 0 && legacy != 1) return false;  // NOTSET, VALID
  if (a.HasArgument("pads")) {
    const auto v = a.GetRepeatedArgument<int>("pads");
    return v.size() == 4 && v[0] == v[2] && v[1] == v[3];
  }
  return a.GetSingleArgument<int>("pad_t", 0) == a.GetSingleArgument<int>("pad_b", 0) &&
         a.GetSingleArgument<int>("pad_l", 0) == a.GetSingleArgument<int>("pad_r", 0);
}

bool TwoDimensional(const ArgumentHelper& a) {
  return !a.HasArgument("kernels") || a.GetRepeatedArgument<int>("kernels").size() == 2;
}

Role RoleIn(const caffe2::OperatorDef& op, const NetView& v) {
  static const std::set<std::string> elementwise = {"Relu", "Sigmoid", "Tanh", "Add", "Sum", "Mul", "Sub", "Div"};
  const Place place = PlaceOf(op, v);
  if (place == Place::kNone || op.output_size() != 1) return Role::kOther;
  const ArgumentHelper a(op);
  if (!ArgIs(a, "order", "NCHW") || a.HasArgument("activation_order")) return Role::kOther;
  const std::string& t = op.type();
  const bool on_gpu = place == Place::kGpu;
  if (t == "Conv" && op.input_size() >= 2 && op.input_size() <= 4) {
    const std::string engine = ResolveEngine(op, DeviceOf(op, v.net));
    // oneDNN sizes outputs as legacy_pad NOTSET does.
    if (!on_gpu && engine == "DNNL" && a.GetSingleArgument<int>("legacy_pad", 0) == 0) return Role::kConv;
    if (on_gpu && engine == "CUDNN" && PadsAlwaysSymmetric(a) && TwoDimensional(a)) return Role::kConv;
    return Role::kOther;
  }
  if ((t == "MaxPool" || t == "AveragePool") && op.input_size() == 1) {
    if (!on_gpu) return Role::kPool;
    const bool cudnn = ResolveEngine(op, DeviceOf(op, v.net)) == "CUDNN";
    return cudnn && PadsAlwaysSymmetric(a) && TwoDimensional(a) ? Role::kPool : Role::kOther;
  }
  if (elementwise.count(t) && !a.HasArgument("broadcast") && op.input_size() >= 1) return Role::kElementwise;
  return Role::kOther;
}

// On the device of the op it serves when that is a GPU (`at`: the converted op that reads or wrote
// the blob); else on the CPU whatever the net's default device: the blobs it switches are the CPU
// ops' (a GPU reader gets its copy from the cross-device copy pass afterwards).
caffe2::OperatorDef OrderSwitch(const char* type, const std::string& from, const std::string& to,
                                const caffe2::OperatorDef& at, const NetView& v) {
  caffe2::OperatorDef op;
  op.set_type(type);
  op.add_input(from);
  op.add_output(to);
  if (PlaceOf(at, v) == Place::kGpu)
    *op.mutable_device_option() = at.has_device_option() ? at.device_option() : v.net.device_option();
  else
    op.mutable_device_option()->set_device_type(0);
  return op;
}

class ChannelsLastPolicy final : public BlobFormPolicy {
 public:
  explicit ChannelsLastPolicy(const caffe2::NetDef& net) : net_{net, GpuTakesNhwc(net)} {}
  std::string Suffix() const override { return "_nhwc"; }
  FormRole RoleOf(const caffe2::OperatorDef& op) const override {
    FormRole r;
    switch (RoleIn(op, net_)) {
      case Role::kOther: return r;
      case Role::kConv: r.inputs = {0, 3}; break;  // X and a fused residual; the filter stays
      case Role::kPool: r.inputs = {0}; break;
      case Role::kElementwise:
        r.follower = true;  // only where every input is channels-last already
        for (int k = 0; k < op.input_size(); ++k) r.inputs.push_back(k);
        break;
    }
    r.convert = true;
    r.outputs = {0};
    return r;
  }
  caffe2::OperatorDef ToForm(const std::string& from, const std::string& to, const caffe2::OperatorDef& reader,
                             int) const override {
    return OrderSwitch("NCHW2NHWC", from, to, reader, net_);
  }
  caffe2::OperatorDef FromForm(const std::string& from, const std::string& to,
                               const caffe2::OperatorDef& writer) const override {
    return OrderSwitch("NHWC2NCHW", from, to, writer, net_);
  }
  std::string Adapt(caffe2::OperatorDef* op) const override {
    const Role role = RoleIn(*op, net_);
    if (role == Role::kConv) SetStringArgument(op, "activation_order", "NHWC");
    else if (role == Role::kPool) SetStringArgument(op, "order", "NHWC");
    return "channels-last (NHWC) activations";
  }

 private:
  const NetView net_;
};

}  // namespace

std::vector<std::string> ConvertToChannelsLast(ChannelsLastInput in) {
  BlobFormInput form{in.net, in.ops, in.op_notes, std::move(in.keep), std::move(in.taken)};
  BlobFormResult r = ConvertBlobForms(std::move(form), ChannelsLastPolicy(*in.net));
  const int convs = TakeLayoutIfWorthIt(&r, in.ops, in.op_notes);
  if (convs == 0) return {};
  return {MakeString("channels-last activations: ", convs, " Conv, ", r.anchors + r.followers - convs, " other ops on NHWC blobs, ",
                     r.switches, " order switches")};
}

}  // namespace hetnet
