#include "core/autodiff.h"

#include <memory>
#include <set>

#include "core/error.h"
#include "core/gradient.h"
#include "core/net.h"
#include "core/op_schema.h"

namespace hetnet {

namespace {

using BlobVersion = std::pair<std::string, int>;

// One producer of a partial gradient: output `slot` of gradient op `op` (op < 0: a name given from
// outside, not renameable).
struct GradGen {
  int op = -1;
  int slot = 0;
  std::string name;
};

class BackwardBuilder {
 public:
  explicit BackwardBuilder(const caffe2::NetDef& net) : net_(net) { ReadSSA(); }

  BackwardPass Build(const std::vector<std::pair<std::string, std::string>>& losses) {
    Seed(losses);
    for (int i = net_.op_size() - 1; i >= 0; --i) Visit(i);
    // What is left are gradients of external inputs (version 0): accumulate them at the end.
    for (const auto& key : order_)
      if (gens_.count(key) && !gens_[key].empty()) Accumulate(key);
    BackwardPass out;
    out.ops = std::move(ops_);
    for (const auto& [blob, vg] : best_)
      if (!vg.second.empty()) out.blob_to_grad[blob] = vg.second;
    return out;
  }

 private:
  void ReadSSA() {
    std::map<std::string, int> version;
    in_ver_.resize(net_.op_size());
    out_ver_.resize(net_.op_size());
    for (int i = 0; i < net_.op_size(); ++i) {
      const auto& op = net_.op(i);
      for (const auto& in : op.input()) in_ver_[i].push_back(version[in]);
      for (const auto& out : op.output()) {
        const int v = ++version[out];
        out_ver_[i].push_back(v);
        producer_[{out, v}] = i;
      }
    }
    final_ver_ = std::move(version);
  }

  int FinalVersion(const std::string& blob) const {
    auto it = final_ver_.find(blob);
    return it == final_ver_.end() ? 0 : it->second;
  }

  std::string OpName(int i) const { return MakeString("operator #", i, " (", net_.op(i).type(), ")"); }

  [[noreturn]] void Fail(ErrorKind kind, const std::string& msg) const {
    Error e(kind, msg);
    e.AddContext(MakeString("while adding gradient operators to net '", net_.name(), "'"));
    throw e;
  }

  void AddGen(const BlobVersion& key, GradGen g) {
    auto& list = gens_[key];
    if (list.empty() && !seen_.count(key)) {
      order_.push_back(key);
      seen_.insert(key);
    }
    list.push_back(std::move(g));
  }

  void Seed(const std::vector<std::pair<std::string, std::string>>& losses) {
    for (const auto& [loss, given] : losses) {
      const int v = FinalVersion(loss);
      bool known = v > 0;
      for (const auto& in : net_.external_input()) known = known || in == loss;
      if (!known)
        Fail(ErrorKind::kNotFound, MakeString("loss blob '", loss, "' is neither produced by an operator nor an external input"));
      if (!given.empty()) {
        AddGen({loss, v}, GradGen{-1, 0, given});
        continue;
      }
      caffe2::OperatorDef fill;
      fill.set_type("ConstantFill");
      fill.set_name("");
      fill.add_input(loss);
      fill.add_output(loss + "_grad");
      auto* arg = fill.add_arg();
      arg->set_name("value");
      arg->set_f(1.0f);
      auto p = producer_.find({loss, v});
      if (p != producer_.end() && net_.op(p->second).has_device_option())
        *fill.mutable_device_option() = net_.op(p->second).device_option();
      ops_.push_back(fill);
      AddGen({loss, v}, GradGen{static_cast<int>(ops_.size()) - 1, 0, loss + "_grad"});
    }
  }

  // Records what we know about `blob`'s gradient at version v: the lowest version wins, and at
  // equal versions a real gradient wins over "none".
  void Record(const std::string& blob, int v, const std::string& grad) {
    auto it = best_.find(blob);
    if (it == best_.end() || v < it->second.first || (v == it->second.first && !grad.empty()))
      best_[blob] = {v, grad};
  }

  // Combines the partial gradients of a blob version into one blob (a Sum when there are several).
  std::string Accumulate(const BlobVersion& key) {
    auto it = gens_.find(key);
    if (it == gens_.end() || it->second.empty()) {
      Record(key.first, key.second, "");
      return "";
    }
    std::vector<GradGen> list = std::move(it->second);
    gens_.erase(it);
    std::string result;
    if (list.size() == 1) {
      result = list[0].name;
    } else {
      caffe2::OperatorDef sum;
      sum.set_type("Sum");
      sum.set_name("");
      bool first_op = true, have_device = false;
      int cnt = 0;
      for (auto& g : list) {
        std::string name = g.name;
        if (g.op >= 0) {
          auto& gop = ops_[g.op];
          if (!have_device && gop.has_device_option()) {
            *sum.mutable_device_option() = gop.device_option();
            have_device = true;
          }
          if (first_op) {
            first_op = false;
          } else {
            name = "_" + g.name + "_autosplit_" + std::to_string(cnt++);
            gop.set_output(g.slot, name);
          }
        }
        sum.add_input(name);
      }
      result = key.first + "_grad";
      // Sum runs in place only on its first input (Caffe2 swapped the same way): a given gradient
      // (not renameable) can come first, leaving the output's name at a later input.
      for (int k = 1; k < sum.input_size(); ++k)
        if (sum.input(k) == result) {
          std::string first = sum.input(0);
          sum.set_input(0, result);
          sum.set_input(k, first);
          break;
        }
      sum.add_output(result);
      ops_.push_back(sum);
    }
    Record(key.first, key.second, result);
    return result;
  }

  void CheckGradientInputs(int i, const std::vector<caffe2::OperatorDef>& defs, const std::set<std::string>& gouts) {
    const auto& op = net_.op(i);
    std::set<std::string> local;
    for (const auto& d : defs) {
      for (const auto& n : d.input()) {
        if (n.empty())
          Fail(ErrorKind::kInvalidArgument,
               MakeString("the gradient of ", OpName(i), " needs the gradient of an output that has none (",
                          "gradient op ", d.type(), "); every output it differentiates must reach a loss"));
        if (gouts.count(n) || local.count(n)) continue;
        int ver = -1;
        for (int k = 0; k < op.output_size() && ver < 0; ++k)
          if (op.output(k) == n) ver = out_ver_[i][k];
        for (int k = 0; k < op.input_size() && ver < 0; ++k)
          if (op.input(k) == n) ver = in_ver_[i][k];
        if (ver >= 0 && ver != FinalVersion(n)) {
          auto later = producer_.find({n, ver + 1});
          Fail(ErrorKind::kInvalidArgument,
               MakeString("the gradient of ", OpName(i), " (", d.type(), ") needs blob '", n, "' as it was at ", OpName(i),
                          ", but ", later != producer_.end() ? OpName(later->second) : std::string("a later operator"),
                          " overwrites it (in place); give that operator's output another name"));
        }
      }
      for (const auto& n : d.output()) local.insert(n);
    }
  }

  void Visit(int i) {
    const auto& op = net_.op(i);
    std::vector<std::string> g_out;
    bool any = false;
    for (int k = 0; k < op.output_size(); ++k) {
      g_out.push_back(Accumulate({op.output(k), out_ver_[i][k]}));
      any = any || !g_out.back().empty();
    }
    auto none = [&] {
      for (int j = 0; j < op.input_size(); ++j) Record(op.input(j), in_ver_[i][j], "");
    };
    // An op without outputs (ZeroGradient) gets no gradient from downstream, but its gradient maker,
    // if it has one, still contributes to its inputs (as Caffe2 differentiated ZeroGradient).
    const bool no_outputs = op.output_size() == 0;
    if ((!any && !no_outputs) || GradientRegistry::HasNoGradient(op.type())) return none();
    const GradientMakerFn* fn = GradientRegistry::Find(op.type());
    if (!fn && no_outputs) return none();
    if (!fn) {
      std::string blob;
      for (size_t k = 0; k < g_out.size() && blob.empty(); ++k)
        if (!g_out[k].empty()) blob = op.output(static_cast<int>(k));
      Fail(ErrorKind::kNotFound,
           MakeString(OpName(i), " has no gradient maker (REGISTER_GRADIENT or NO_GRADIENT for '", op.type(),
                      "'), but its output '", blob, "' needs a gradient on the way back from the loss; ",
                      "add a StopGradient before it or register its gradient"));
    }
    // A maker reads the op's inputs and outputs by index: check the counts first (as Caffe2 did).
    if (const OpSchema* schema = OpSchemaRegistry::Find(op.type())) {
      try {
        schema->Verify(op);
      } catch (Error& e) {
        e.AddContext(MakeString(OpName(i), " did not pass schema checking, so its gradient cannot be made (net '",
                                net_.name(), "')"));
        throw;
      }
    }
    std::unique_ptr<GradientMakerBase> maker = (*fn)(op, g_out);
    maker->set_input_grads_size(op.input_size());
    std::vector<caffe2::OperatorDef> defs;
    try {
      defs = maker->GetGradientDefs();
    } catch (Error& e) {
      e.AddContext(MakeString("making the gradient of ", OpName(i), " in net '", net_.name(), "'"));
      throw;
    }
    std::set<std::string> gouts;
    for (const auto& g : g_out)
      if (!g.empty()) gouts.insert(g);
    CheckGradientInputs(i, defs, gouts);
    const int base = static_cast<int>(ops_.size());
    for (auto& d : defs) ops_.push_back(std::move(d));
    std::vector<std::string> gin = maker->input_grads();
    gin.resize(op.input_size());
    std::set<std::pair<int, int>> claimed;
    for (int j = 0; j < op.input_size(); ++j) {
      if (gin[j].empty()) {
        Record(op.input(j), in_ver_[i][j], "");
        continue;
      }
      GradGen g{-1, 0, gin[j]};
      for (int d = static_cast<int>(ops_.size()) - 1; d >= base && g.op < 0; --d)
        for (int s = 0; s < ops_[d].output_size(); ++s)
          if (ops_[d].output(s) == gin[j] && !claimed.count({d, s})) {
            g.op = d;
            g.slot = s;
            claimed.insert({d, s});
            break;
          }
      AddGen({op.input(j), in_ver_[i][j]}, g);
    }
  }

  const caffe2::NetDef& net_;
  std::vector<std::vector<int>> in_ver_, out_ver_;
  std::map<std::string, int> final_ver_;
  std::map<BlobVersion, int> producer_;
  std::map<BlobVersion, std::vector<GradGen>> gens_;
  std::vector<BlobVersion> order_;
  std::set<BlobVersion> seen_;
  std::map<std::string, std::pair<int, std::string>> best_;
  std::vector<caffe2::OperatorDef> ops_;
};

}  // namespace

BackwardPass GetBackwardPass(const caffe2::NetDef& net, const std::vector<std::pair<std::string, std::string>>& losses) {
  return BackwardBuilder(net).Build(losses);
}

BackwardPass GetBackwardPass(const caffe2::NetDef& net, const std::vector<std::string>& losses) {
  std::vector<std::pair<std::string, std::string>> l;
  for (const auto& s : losses) l.emplace_back(s, "");
  return GetBackwardPass(net, l);
}

std::map<std::string, std::string> AddGradientOperators(caffe2::NetDef* net, const std::vector<std::string>& losses) {
  BackwardPass pass = GetBackwardPass(*net, losses);
  for (auto& op : pass.ops) *net->add_op() = std::move(op);
  return pass.blob_to_grad;
}

}  // namespace hetnet
