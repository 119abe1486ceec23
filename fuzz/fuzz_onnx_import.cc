// An ONNX model file: ImportOnnxModel (ModelProto parse, initializers, every converter), then the
// imported nets created and, when small, run on CPU with each graph input fed a small float tensor.
// External data is refused (no base_dir), so the input cannot make the importer open files.
#include <cmath>

#include "core/tensor.h"
#include "core/workspace.h"
#include "fuzz/fuzz_common.h"
#include "onnx/onnx_import.h"

static void Run(const uint8_t* data, size_t size) {
  const hetnet::onnxio::ImportedOnnxModel m = hetnet::onnxio::ImportOnnxModel(hetnet_fuzz::Bytes(data, size));
  if (m.predict_net.op_size() > 16 || m.init_net.op_size() > 64) return;
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
