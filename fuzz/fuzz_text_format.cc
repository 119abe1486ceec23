// Protobuf text format (what `.pbtxt` NetDefs and tensors are) through ParseProtoFromString into a
// NetDef, a TensorProto and a BlobProto; whatever parses as a tensor is decoded into one.
#include "core/proto_io.h"
#include "core/tensor_proto.h"
#include "fuzz/fuzz_common.h"

template <typename Msg, typename Then>
static void Try(const std::string& text, Then then) {
  Msg msg;
  try {
    hetnet::ParseProtoFromString(text, &msg, "<fuzz text>");
  } catch (const hetnet::Error&) {
    return;
  }
  hetnet_fuzz::CheckParseBound(text, msg);
  try {
    then(msg);
  } catch (const hetnet::Error&) {
  }
}

static void Run(const uint8_t* data, size_t size) {
  const std::string text = hetnet_fuzz::Bytes(data, size);
  Try<caffe2::NetDef>(text, [](const caffe2::NetDef& n) { (void)hetnet::SerializeProto(n, /*text=*/true); });
  Try<caffe2::TensorProto>(text, [](const caffe2::TensorProto& p) { (void)hetnet::TensorFromProto(p); });
  Try<caffe2::BlobProto>(text, [](const caffe2::BlobProto& b) { (void)hetnet::TensorFromBlobProto(b); });
}

HETNET_FUZZ_ENTRY(Run)
