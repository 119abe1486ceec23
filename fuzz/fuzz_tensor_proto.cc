// TensorProto / TensorProtos bytes (what `hetnet run --input x.pb` and Caffe2's tensor files are)
// decoded into tensors: TensorFromProto, DeserializeTensorProtoInto over an existing tensor (the
// segment path), and a serialize/decode round trip of whatever decoded.
#include "core/proto_io.h"
#include "core/tensor_proto.h"
#include "fuzz/fuzz_common.h"

static void Decode(const caffe2::TensorProto& p) {
  hetnet::Tensor t = hetnet::TensorFromProto(p);
  caffe2::TensorProto again = hetnet::TensorToProto(t, p.name());
  hetnet::Tensor back = hetnet::TensorFromProto(again);
  if (back.numel() != t.numel()) __builtin_trap();  // the round trip must keep the element count
}

static void Run(const uint8_t* data, size_t size) {
  const std::string bytes = hetnet_fuzz::Bytes(data, size);
  caffe2::TensorProto p;
  bool parsed = false;
  try {
    hetnet::ParseProtoFromString(bytes, &p, "<fuzz>");
    parsed = true;
  } catch (const hetnet::Error&) {
  }
  if (parsed) {
    try {
      Decode(p);
    } catch (const hetnet::Error&) {
    }
    // Into a tensor that already holds something (a chunk fills a range of it).
    hetnet::Tensor dst({4, 4}, hetnet::DataType::Float);
    try {
      hetnet::DeserializeTensorProtoInto(p, &dst);
    } catch (const hetnet::Error&) {
    }
  }
  caffe2::TensorProtos ps;
  hetnet::ParseProtoFromString(bytes, &ps, "<fuzz>");
  for (int i = 0; i < ps.protos_size() && i < 16; ++i) {
    try {
      Decode(ps.protos(i));
    } catch (const hetnet::Error&) {
    }
  }
}

HETNET_FUZZ_ENTRY(Run)
