#include "core/blocked_activations_pass.h"

#include "core/argument.h"
#include "core/blob_form_pass.h"
#include "core/error.h"
#include "core/operator.h"
#include "core/reduced_precision.h"

namespace hetnet {
namespace {

bool OnCpu(const caffe2::OperatorDef& op, const caffe2::NetDef& net) {
  try {
    return DeviceFromOption(op.has_device_option() ? op.device_option() : net.device_option()).is_cpu();
  } catch (const Error&) {
    return false;  // placement reports the bad device
  }
}

class BlockedPolicy final : public BlobFormPolicy {
 public:
  explicit BlockedPolicy(const BlockedActivationsInput& in)
      : in_(in), order_("NCHW" + std::to_string(in.block) + "c") {}
  std::string Suffix() const override { return "_blk"; }

  FormRole RoleOf(const caffe2::OperatorDef& op) const override {
    static const std::set<std::string> elementwise = {"Relu", "Sigmoid", "Tanh"};
    FormRole r;
    if (!OnCpu(op, *in_.net) || op.output_size() != 1 || op.input_size() < 1) return r;
    const ArgumentHelper a(op);
    if (a.HasArgument("order") && a.GetSingleArgument<std::string>("order", "") != "NCHW") return r;
    if (a.HasArgument("activation_order")) return r;
    if (a.HasArgument("kernels") && a.GetRepeatedArgument<int>("kernels").size() != 2) return r;
    const std::string& t = op.type();
    if (t == "Conv") {
      int64_t c = 0;
      if (!ConvFits(op, &c)) return r;
      if (c % in_.block == 0) r.inputs.push_back(0);
      if (op.input_size() == 4) r.inputs.push_back(3);  // the fused residual (Y's shape)
    } else if ((t == "MaxPool" || t == "AveragePool") && op.input_size() == 1) {
      r.follower = true;
      r.inputs = {0};
    } else if (elementwise.count(t) && op.input_size() == 1) {
      r.follower = true;
      r.inputs = {0};
    } else {
      return r;
    }
    r.convert = true;
    r.outputs = {0};
    return r;
  }

  caffe2::OperatorDef ToForm(const std::string& from, const std::string& to, const caffe2::OperatorDef&,
                             int) const override {
    return Switch("NCHWToBlocked", from, to);
  }
  caffe2::OperatorDef FromForm(const std::string& from, const std::string& to,
                               const caffe2::OperatorDef&) const override {
    return Switch("BlockedToNCHW", from, to);
  }
  std::string Adapt(caffe2::OperatorDef* op) const override {
    const char* name = op->type() == "Conv" ? "activation_order"
                       : op->type() == "MaxPool" || op->type() == "AveragePool" ? "order"
                                                                                 : nullptr;
    if (name) SetStringArgument(op, name, order_);
    // Blocked bytes exist only on the CPU: pinned there, so that automatic placement keeps it.
    if (!op->has_device_option()) op->mutable_device_option()->set_device_type(0);
    return "blocked (" + order_ + ") activations";
  }

 private:
  // A DNNL Conv (legacy_pad NOTSET: oneDNN's output size) whose filter [M, C/group, kH, kW] is
  // known with M a multiple of the block; *c: its input channels.
  bool ConvFits(const caffe2::OperatorDef& op, int64_t* c) const {
    if (op.input_size() < 2 || op.input_size() > 4) return false;
    if (ArgumentHelper(op).GetSingleArgument<int>("legacy_pad", 0) != 0) return false;
    try {
      if (ResolveEngine(op, Device::CPU()) != "DNNL") return false;
    } catch (const Error&) {
      return false;
    }
    const std::vector<int64_t> f = in_.filter_shape ? in_.filter_shape(op.input(1)) : std::vector<int64_t>{};
    if (f.size() != 4 || f[0] <= 0 || f[0] % in_.block != 0) return false;
    *c = f[1] * ArgumentHelper(op).GetSingleArgument<int>("group", 1);
    return true;
  }

  caffe2::OperatorDef Switch(const char* type, const std::string& from, const std::string& to) const {
    caffe2::OperatorDef op;
    op.set_type(type);
    op.add_input(from);
    op.add_output(to);
    op.mutable_device_option()->set_device_type(0);
    auto* a = op.add_arg();
    a->set_name("channel_block");
    a->set_i(in_.block);
    return op;
  }

  const BlockedActivationsInput& in_;
  const std::string order_;
};

bool FloatNet(const caffe2::NetDef& net) {
  try {
    return NetPrecision(net) == DataType::Float;
  } catch (const Error&) {
    return false;  // the rewriter reports the bad precision
  }
}

}  // namespace

int DefaultChannelBlock() {
#if defined(__x86_64__) || defined(__i386__)
  static const int block = __builtin_cpu_supports("avx512f") ? 16 : 8;
  return block;
#else
  return 8;
#endif
}

std::vector<std::string> ConvertToBlockedActivations(BlockedActivationsInput in) {
  if ((in.block != 8 && in.block != 16) || !FloatNet(*in.net)) return {};
  const BlockedPolicy policy(in);
  BlobFormInput form{in.net, in.ops, in.op_notes, in.keep, in.taken};
  BlobFormResult r = ConvertBlobForms(std::move(form), policy);
  const int convs = TakeLayoutIfWorthIt(&r, in.ops, in.op_notes);
  if (convs == 0) return {};
  return {MakeString("blocked activations (NCHW", in.block, "c): ", convs, " Conv, ",
                     r.anchors + r.followers - convs, " other ops on blocked blobs, ", r.switches, " layout switches")};
}

}  // namespace hetnet
