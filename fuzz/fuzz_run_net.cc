// Small nets run for real on CPU: at most 16 ops, every external input fed a small float tensor
// (shape and values from the input's name), tensors capped at 64 MiB, DAG nets at 4 workers.
// Ops that touch files or the terminal (Save, Load, Print, DB readers, Python) are skipped.
#include <cmath>

#include "core/proto_io.h"
#include "core/tensor.h"
#include "core/workspace.h"
#include "fuzz/fuzz_common.h"

static bool Unsafe(const std::string& type) {
  return type == "Save" || type == "Load" || type == "Print" || type.find("DB") != std::string::npos ||
         type.find("Python") != std::string::npos;
}

static void Run(const uint8_t* data, size_t size) {
  caffe2::NetDef net;
  hetnet::ParseProtoFromString(hetnet_fuzz::Bytes(data, size), &net, "<fuzz>");
  if (net.op_size() > 16 || net.external_input_size() > 16) return;
  for (const auto& op : net.op()) {
    if (Unsafe(op.type())) return;
  }
  hetnet::Workspace ws;
  for (const auto& name : net.external_input()) {
    if (hetnet::HasNul(name) || ws.HasBlob(name)) continue;
    // Shape [2, 3, 4, 4] cut to 1..4 dims by the name's length: inputs for FC, Conv, pools alike.
    std::vector<int64_t> shape = {2, 3, 4, 4};
    shape.resize(1 + name.size() % 4);
    hetnet::Tensor* t = ws.CreateBlob(name)->GetMutableTensor(hetnet::Device::CPU());
    t->Resize(shape);
    float* p = t->mutable_data<float>();
    for (int64_t i = 0; i < t->numel(); ++i) p[i] = std::sin(0.37f * static_cast<float>(i + name.size()));
  }
  ws.RunNetOnce(net);
}

HETNET_FUZZ_ENTRY(Run)
