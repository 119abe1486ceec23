#include "core/channels_last_pass.h"

#include <map>

#include "core/argument.h"
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

Role RoleOf(const caffe2::OperatorDef& op, const caffe2::NetDef& net) {
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

class Converter {
 public:
  explicit Converter(ChannelsLastInput in) : in_(std::move(in)) {}

  std::vector<std::string> Run() {
    const auto& ops = *in_.ops;
    std::set<std::string> written;
    for (const auto& op : ops) {
      for (const auto& b : op.input())
        if (!written.count(b)) read_first_.insert(b);  // a value from before the run
      written.insert(op.output().begin(), op.output().end());
    }
    for (size_t i = 0; i < ops.size(); ++i) Visit(ops[i], in_.op_notes->at(i));
    for (const auto& [name, nhwc] : nhwc_of_)  // values someone reads after the run
      if (!nchw_valid_[name] && (in_.keep.count(name) || read_first_.count(name)))
        Emit(OrderSwitch("NHWC2NCHW", nhwc, name), ""), ++switches_;
    if (convs_ == 0 || switches_ >= 2 * convs_) return {};  // each conversion saves a Conv's two reorders
    *in_.ops = std::move(out_);
    *in_.op_notes = std::move(notes_);
    return {MakeString("channels-last activations: ", convs_, " Conv, ", others_, " other ops on NHWC blobs, ",
                       switches_, " order switches")};
  }

 private:
  void Visit(const caffe2::OperatorDef& op, const std::string& note) {
    Role role = RoleOf(op, *in_.net);
    if (role == Role::kElementwise)
      for (const auto& b : op.input())
        if (!nhwc_of_.count(b)) role = Role::kOther;  // only where every input is channels-last already
    if (role == Role::kOther) {
      for (const auto& b : op.input()) MaterializeNchw(b);
      for (const auto& b : op.output()) nhwc_of_.erase(b), nchw_valid_[b] = true;
      Emit(op, note);
      return;
    }
    caffe2::OperatorDef r = op;
    // Activations: every input of an elementwise op, a Conv's X and fused residual, a pool's X.
    for (int k = 0; k < op.input_size(); ++k)
      if (role == Role::kElementwise || k == 0 || k == 3) r.set_input(k, Nhwc(op.input(k)));
    const std::string& y = op.output(0);
    std::string y_nhwc;
    if (nhwc_of_.count(y)) {
      y_nhwc = nhwc_of_[y];
    } else {
      y_nhwc = Fresh(y + "_nhwc");
      nhwc_of_[y] = y_nhwc;
    }
    r.set_output(0, y_nhwc);
    nchw_valid_[y] = false;
    if (role == Role::kConv) SetStringArg(&r, "activation_order", "NHWC"), ++convs_;
    else if (role == Role::kPool) SetStringArg(&r, "order", "NHWC"), ++others_;
    else ++others_;
    Emit(r, note + (note.empty() ? "" : ", ") + "channels-last (NHWC) activations");
  }

  // The NHWC blob of b's current value, made by an NCHW2NHWC op when there is none yet.
  std::string Nhwc(const std::string& b) {
    auto it = nhwc_of_.find(b);
    if (it != nhwc_of_.end()) return it->second;
    const std::string n = Fresh(b + "_nhwc");
    Emit(OrderSwitch("NCHW2NHWC", b, n), "");
    ++switches_;
    nhwc_of_[b] = n;
    nchw_valid_[b] = true;
    return n;
  }

  void MaterializeNchw(const std::string& b) {
    auto it = nchw_valid_.find(b);
    if (it == nchw_valid_.end() || it->second) return;
    Emit(OrderSwitch("NHWC2NCHW", nhwc_of_.at(b), b), "");
    ++switches_;
    it->second = true;
  }

  std::string Fresh(const std::string& base) {
    for (int k = 0;; ++k) {
      std::string n = k ? base + "_" + std::to_string(k) : base;
      if (in_.taken.insert(n).second) return n;
    }
  }

  void Emit(caffe2::OperatorDef op, const std::string& note) {
    out_.push_back(std::move(op));
    notes_.push_back(note);
  }

  ChannelsLastInput in_;
  std::map<std::string, std::string> nhwc_of_;  // blob -> the NHWC blob holding its current value
  std::map<std::string, bool> nchw_valid_;      // whether the blob itself holds its current value
  std::set<std::string> read_first_;
  std::vector<caffe2::OperatorDef> out_;
  std::vector<std::string> notes_;
  int convs_ = 0, others_ = 0, switches_ = 0;
};

}  // namespace

std::vector<std::string> ConvertToChannelsLast(ChannelsLastInput in) {
  for (const auto& op : *in.ops) {
    in.taken.insert(op.input().begin(), op.input().end());
    in.taken.insert(op.output().begin(), op.output().end());
  }
  in.taken.insert(in.net->external_input().begin(), in.net->external_input().end());
  in.taken.insert(in.net->external_output().begin(), in.net->external_output().end());
  return Converter(std::move(in)).Run();
}

}  // namespace hetnet
