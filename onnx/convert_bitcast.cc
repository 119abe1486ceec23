// Converter of ONNX's BitCast (opset 26) onto the CPU hetnet operator of the same name
// (operators/bitcast_op), `to` mapped to hetnet's dtype (a type hetnet tensors lack is refused).
// Registered from RegisterNnConverters.
#include "onnx/onnx_context.h"

namespace hetnet::onnxio {

void RegisterBitCastConverters(ConverterRegistry& r) {
  r.Add("BitCast", 26, kNewestOpset, [](ConvertContext& c) {
    const int32_t onnx_type = static_cast<int32_t>(c.Int("to", 0));
    const auto t = DtypeFromOnnx(onnx_type);
    if (t == caffe2::TensorProto::UNDEFINED || t == caffe2::TensorProto::STRING)
      c.Refuse(std::string("to ") + OnnxTypeName(onnx_type) + " is not supported");
    AddArg(c.Emit("BitCast", {c.in(0)}, {c.out(0)}), "to", static_cast<int64_t>(t));
    c.SameDims(c.out(0), c.in(0));
  });
}

}  // namespace hetnet::onnxio
