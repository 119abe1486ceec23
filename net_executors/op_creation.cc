#include "net_executors/op_creation.h"

#include <map>
#include <set>
#include <string>

#include "core/net.h"
#include "core/workspace.h"

namespace hetnet {

namespace {
void SetCopyStream(caffe2::OperatorDef* op) {
  if (DeviceFromOption(op->device_option()).is_cpu()) return;
  int id = 0;
  if (op->type() == "CopyCPUToGPU") id = kHostToDeviceStream;
  else if (op->type() == "CopyGPUToCPU") id = kDeviceToHostStream;
  else if (op->type() == "Copy") id = kPeerCopyStream;
  if (id == 0) return;
  for (const auto& a : op->arg())
    if (a.name() == "stream_id") return;  // the net's own choice wins
  auto* arg = op->add_arg();
  arg->set_name("stream_id");
  arg->set_i(id);
  if (id == kDeviceToHostStream) {  // the executor makes host readers wait on the copy's event
    auto* sync = op->add_arg();
    sync->set_name("sync_host");
    sync->set_i(0);
  }
}
}  // namespace

std::vector<std::unique_ptr<OperatorBase>> CreateNetOperators(caffe2::NetDef& def, Workspace* ws, bool copy_streams) {
  std::vector<std::unique_ptr<OperatorBase>> ops;
  std::set<std::string> available(def.external_input().begin(), def.external_input().end());
  for (int i = 0; i < def.op_size(); ++i) {
    caffe2::OperatorDef* op_def = def.mutable_op(i);
    try {
      for (int k = 0; k < op_def->input_size(); ++k) {
        const std::string& in = op_def->input(k);
        if (available.count(in)) {
          if (!ws->HasBlob(in)) ws->CreateBlob(in);  // fed later, before Run
          continue;
        }
        HN_CHECK_KIND(kNotFound, ws->HasBlob(in), "input ", k, " ('", in,
                      "') is neither an external input of the net, nor an output of an earlier operator, "
                      "nor a blob in the workspace");
      }
      if (copy_streams) SetCopyStream(op_def);
      ops.push_back(CreateOperator(*op_def, ws));
    } catch (...) {
      RethrowWithContext(OperatorContext(def, i));
    }
    for (const auto& out : op_def->output()) available.insert(out);
  }
  PrepareConstantInputs(def, ops);
  return ops;
}

void PrepareConstantInputs(const caffe2::NetDef& def, const std::vector<std::unique_ptr<OperatorBase>>& ops) {
  std::map<std::string, std::vector<size_t>> writers;  // blob -> the ops that write it
  for (size_t i = 0; i < ops.size(); ++i)
    for (const auto& out : def.op(static_cast<int>(i)).output()) writers[out].push_back(i);
  std::vector<bool> prepared(ops.size(), false);  // ops whose outputs hold their constant values now
  auto unchanged_by_net = [&](const std::string& blob, size_t reader) {
    auto it = writers.find(blob);
    if (it == writers.end()) return true;
    for (size_t w : it->second)
      if (w >= reader || !prepared[w]) return false;
    return true;
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    OperatorBase& op = *ops[i];
    std::vector<bool> constant(op.InputSize());
    bool any = false;
    for (int k = 0; k < op.InputSize(); ++k) {
      const Blob* b = op.InputBlob(k);
      constant[k] = unchanged_by_net(def.op(static_cast<int>(i)).input(k), i) && b->IsTensor() &&
                    b->GetTensor().initialized() && b->GetTensor().device() == op.InputDevice(k);
      any = any || constant[k];
    }
    if (!any) continue;
    // Preparing early only saves the first run's time: a failure here (an absurd size, a shape the
    // kernel refuses) is left for that run to report, with its net and operator named.
    try {
      prepared[i] = op.PrepareConstantInputs(constant);
    } catch (const std::exception&) {
    }
  }
}

}  // namespace hetnet
