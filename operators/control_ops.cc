// Control flow of Caffe2 (PyTorch 1.x): If and While run sub-nets given as NetDef arguments in
// the operator's own workspace (hetnet has no child workspaces, so blobs a sub-net makes stay
// visible outside it).
//   If(cond, ...) -> (...): then_net runs when the one-element bool tensor cond is true, else
//     else_net (optional).
//   While(cond, ...) -> (...): cond_net (optional) runs, then while cond is true loop_net runs,
//     then cond_net again.
// The extra inputs and outputs declare which outer blobs the sub-nets read and write (brew.cond /
// brew.loop compute them), so executors order the operator correctly; any input may also be an
// output. The sub-nets are created with the operator and run in place of it; no gradient.
#include <set>
#include <utility>

#include "core/error.h"
#include "core/gradient.h"
#include "core/net.h"
#include "core/operator.h"

namespace hetnet {
namespace {

const caffe2::NetDef* FindNetArgument(const caffe2::OperatorDef& def, const std::string& name) {
  for (const auto& arg : def.arg())
    if (arg.name() == name) {
      HN_ENFORCE(arg.has_n(), def.type(), ": argument '", name, "' must be a NetDef");
      return &arg.n();
    }
  return nullptr;
}

std::unique_ptr<NetBase> CreateSubNet(const caffe2::OperatorDef& def, Workspace* ws, const std::string& name,
                                      bool required) {
  const caffe2::NetDef* net = FindNetArgument(def, name);
  if (!net) {
    HN_ENFORCE(!required, def.type(), " needs the NetDef argument '", name, "'");
    return nullptr;
  }
  try {
    return CreateNetFromDef(*net, ws);
  } catch (Error& e) {
    e.AddContext(MakeString("creating the sub-net '", name, "' of ", def.type(), " operator '", def.name(), "'"));
    throw;
  }
}

bool ReadCondition(const caffe2::OperatorDef& def, const Tensor& cond) {
  HN_ENFORCE(cond.dtype() == DataType::Bool, def.type(), ": the condition '", def.input(0),
             "' must be a bool tensor, got ", DataTypeName(cond.dtype()));
  HN_ENFORCE(cond.numel() == 1, def.type(), ": the condition '", def.input(0), "' must hold one value, it has ",
             cond.numel());
  return cond.data<bool>()[0];
}

void RunSubNet(const caffe2::OperatorDef& def, NetBase* net, const char* which) {
  try {
    net->Run();
  } catch (Error& e) {
    e.AddContext(MakeString("running the ", which, " of ", def.type(), " (input '", def.input(0), "')"));
    throw;
  }
}

class IfOp final : public Operator<CPUContext> {
 public:
  IfOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        then_net_(CreateSubNet(def, ws, "then_net", true)),
        else_net_(CreateSubNet(def, ws, "else_net", false)) {}
  void RunOnDevice() override {
    if (ReadCondition(def(), Input(0)))
      RunSubNet(def(), then_net_.get(), "then_net");
    else if (else_net_)
      RunSubNet(def(), else_net_.get(), "else_net");
  }

 private:
  std::unique_ptr<NetBase> then_net_, else_net_;
};

class WhileOp final : public Operator<CPUContext> {
 public:
  WhileOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        loop_net_(CreateSubNet(def, ws, "loop_net", true)),
        cond_net_(CreateSubNet(def, ws, "cond_net", false)) {}
  void RunOnDevice() override {
    while (true) {
      if (cond_net_) RunSubNet(def(), cond_net_.get(), "cond_net");
      if (!ReadCondition(def(), Input(0))) return;
      RunSubNet(def(), loop_net_.get(), "loop_net");
    }
  }

 private:
  std::unique_ptr<NetBase> loop_net_, cond_net_;
};

// Any input may be an output too (a loop both reads and writes its state).
std::set<std::pair<int, int>> AnyInplace() {
  std::set<std::pair<int, int>> pairs;
  for (int i = 0; i < 128; ++i)
    for (int o = 0; o < 128; ++o) pairs.insert({i, o});
  return pairs;
}

}  // namespace

OPERATOR_SCHEMA(If)
    .NumInputs(1, 1 << 30)
    .NumOutputs(0, 1 << 30)
    .AllowInplace(AnyInplace())
    .SetDoc("If(cond, outer inputs...) -> (outer outputs...): runs the NetDef argument then_net when the bool "
            "cond is true, else else_net (optional), in this workspace. Inputs/outputs declare the outer blobs "
            "the sub-nets read and write (brew.cond computes them).");
OPERATOR_SCHEMA(While)
    .NumInputs(1, 1 << 30)
    .NumOutputs(0, 1 << 30)
    .AllowInplace(AnyInplace())
    .SetDoc("While(cond, outer inputs...) -> (outer outputs...): runs cond_net (optional), then loop_net and "
            "cond_net again while the bool cond is true, in this workspace (brew.loop builds it).");
REGISTER_CPU_OPERATOR(If, IfOp);
REGISTER_CPU_OPERATOR(While, WhileOp);
NO_GRADIENT(If);
NO_GRADIENT(While);

}  // namespace hetnet
