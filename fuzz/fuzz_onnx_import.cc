// An ONNX model file: ImportOnnxModel (ModelProto parse, initializers, every converter), then the
// imported nets created and, when small, run on CPU with each graph input fed a small float tensor.
// External data is refused (no base_dir), so the input cannot make the importer open files; loops
// are capped at 64 iterations.
#include <algorithm>
#include <cmath>

#include "core/tensor.h"
#include "core/workspace.h"
#include "fuzz/fuzz_common.h"
#include "onnx/onnx_import.h"

// Caps every OnnxLoop (also in nested subnets) at 64 iterations: like the op-count caps, it bounds
// the work one input can ask for (a Loop may legitimately run 2^20 times: seconds natively, minutes
// under ASan, which libFuzzer would report as a hang of its own -timeout).
static void CapLoops(caffe2::NetDef* net) {
  for (auto& op : *net->mutable_op()) {
    bool capped = false;
    for (auto& a : *op.mutable_arg()) {
      if (a.has_n()) CapLoops(a.mutable_n());
      if (a.name() == "max_iterations") a.set_i(std::min<int64_t>(a.i(), 64)), capped = true;
    }
    if (op.type() == "OnnxLoop" && !capped) {
      auto* a = op.add_arg();
      a->set_name("max_iterations");
      a->set_i(64);
    }
  }
}

static void Run(const uint8_t* data, size_t size) {
  hetnet::onnxio::ImportedOnnxModel m = hetnet::onnxio::ImportOnnxModel(hetnet_fuzz::Bytes(data, size));
  if (m.predict_net.op_size() > 16 || m.init_net.op_size() > 64) return;
  CapLoops(&m.predict_net);
  hetnet::Workspace ws;
  ws.RunNetOnce(m.init_net);
  for (const auto& in : m.inputs) {
    if (ws.HasBlob(in.name)) continue;
    std::vector<int64_t> shape;
    for (int64_t d : in.dims) shape.push_back(d > 0 && d <= 8 ? d : 2);  // symbolic or large dims: 2
    hetnet::Tensor* t = ws.CreateBlob(in.name)->GetMutableTensor(hetnet::Device::CPU());
    t->Resize(shape);
    float* p = t->mutable_data<float>();
    for (int64_t i = 0; i < t->numel(); ++i) p[i] = std::sin(0.37f * static_cast<float>(i));
  }
  ws.RunNetOnce(m.predict_net);
}

HETNET_FUZZ_ENTRY(Run)
