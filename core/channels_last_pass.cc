#include "core/channels_last_pass.h"

#include "core/argument.h"
#include "core/blob_form_pass.h"
#include "core/error.h"
#include "core/operator.h"

namespace hetnet {
namespace {

enum class Role { kOther, kConv, kPool, kElementwise };

bool OnCpu(const caffe2::OperatorDef& op, const caffe2::NetDef& net) {
  try {
    return DeviceFromOption(op.has_device_option() ? op.device_option() : net.device_option()).is_cpu();
  } catch (const Error&) {
    return false;  // placement reports the bad device
  }
}

bool ArgIs(const ArgumentHelper& a, const char* name, const std::string& value) {
  return !a.HasArgument(name) || a.GetSingleArgument<std::string>(name, "") == value;
}

Role RoleIn(const caffe2::OperatorDef& op, const caffe2::NetDef& net) {
  static const std::set<std::string> elementwise = {"Relu", "Sigmoid", "Tanh", "Add", "Sum", "Mul", "Sub", "Div"};
  if (!OnCpu(op, net) || op.output_size() != 1) return Role::kOther;
  const ArgumentHelper a(op);
  if (!ArgIs(a, "order", "NCHW") || a.HasArgument("activation_order")) return Role::kOther;
  const std::string& t = op.type();
  if (t == "Conv" && op.input_size() >= 2 && op.input_size() <= 4 && ResolveEngine(op, Device::CPU()) == "DNNL" &&
      a.GetSingleArgument<int>("legacy_pad", 0) == 0)  // oneDNN sizes outputs as NOTSET does
    return Role::kConv;
  if ((t == "MaxPool" || t == "AveragePool") && op.input_size() == 1) return Role::kPool;
  if (elementwise.count(t) && !a.HasArgument("broadcast") && op.input_size() >= 1) return Role::kElementwise;
  return Role::kOther;
}

// On the CPU whatever the net's default device: the blobs it switches are the CPU ops' (a GPU
// reader gets its copy from the cross-device copy pass afterwards).
caffe2::OperatorDef OrderSwitch(const char* type, const std::string& from, const std::string& to) {
  caffe2::OperatorDef op;
  op.set_type(type);
  op.add_input(from);
  op.add_output(to);
  op.mutable_device_option()->set_device_type(0);
  return op;
}

void SetStringArg(caffe2::OperatorDef* op, const char* name, const char* value) {
  for (auto& a : *op->mutable_arg())
    if (a.name() == name) return a.set_s(value);
  auto* a = op->add_arg();
  a->set_name(name);
  a->set_s(value);
}

class ChannelsLastPolicy final : public BlobFormPolicy {
 public:
  explicit ChannelsLastPolicy(const caffe2::NetDef& net) : net_(net) {}
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
  caffe2::OperatorDef ToForm(const std::string& from, const std::string& to, const caffe2::OperatorDef&,
                             int) const override {
    return OrderSwitch("NCHW2NHWC", from, to);
  }
  caffe2::OperatorDef FromForm(const std::string& from, const std::string& to, const caffe2::OperatorDef&) const override {
    return OrderSwitch("NHWC2NCHW", from, to);
  }
  std::string Adapt(caffe2::OperatorDef* op) const override {
    const Role role = RoleIn(*op, net_);
    if (role == Role::kConv) SetStringArg(op, "activation_order", "NHWC");
    else if (role == Role::kPool) SetStringArg(op, "order", "NHWC");
    return "channels-last (NHWC) activations";
  }

 private:
  const caffe2::NetDef& net_;
};

}  // namespace

std::vector<std::string> ConvertToChannelsLast(ChannelsLastInput in) {
  BlobFormInput form{in.net, in.ops, in.op_notes, std::move(in.keep), std::move(in.taken)};
  BlobFormResult r = ConvertBlobForms(std::move(form), ChannelsLastPolicy(*in.net));
  int convs = 0;
  for (const auto& op : r.ops) convs += op.type() == "Conv" && ArgumentHelper(op).HasArgument("activation_order");
  if (convs == 0 || r.switches >= 2 * convs) return {};  // each conversion saves a Conv's two reorders
  *in.ops = std::move(r.ops);
  *in.op_notes = std::move(r.op_notes);
  return {MakeString("channels-last activations: ", convs, " Conv, ", r.anchors + r.followers - convs, " other ops on NHWC blobs, ",
                     r.switches, " order switches")};
}

}  // namespace hetnet
