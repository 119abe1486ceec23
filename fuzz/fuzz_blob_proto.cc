// BlobProto bytes (a minidb record's value; Caffe2's checkpoint chunks) decoded into a tensor, alone
// and as a set of chunks (the same chunk twice must be refused, never double-filled).
#include "core/proto_io.h"
#include "core/tensor_proto.h"
#include "fuzz/fuzz_common.h"

static void Run(const uint8_t* data, size_t size) {
  caffe2::BlobProto b;
  hetnet::ParseProtoFromString(hetnet_fuzz::Bytes(data, size), &b, "<fuzz>");
  try {
    (void)hetnet::TensorFromBlobProto(b);
  } catch (const hetnet::Error&) {
  }
  try {
    (void)hetnet::TensorFromBlobProtos({b});
  } catch (const hetnet::Error&) {
  }
  (void)hetnet::TensorFromBlobProtos({b, b});
}

HETNET_FUZZ_ENTRY(Run)
