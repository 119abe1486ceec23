#include "core/blob_serialization.h"

#include <memory>

#include "core/tensor_proto.h"
#include "proto/caffe2.pb.h"

namespace hetnet {

namespace {
constexpr const char* kStringType = "std::string";  // Caffe2's StringSerializer type name
}

std::string SerializeBlob(const Blob& blob, const std::string& name) {
  caffe2::BlobProto proto;
  if (blob.IsTensor()) {
    const Tensor& t = blob.GetTensor();
    HN_ENFORCE(t.initialized(), "cannot serialize blob '", name, "': its tensor has no data yet");
    proto = TensorToBlobProto(t, name);
  } else if (blob.IsType<std::string>()) {
    proto.set_name(name);
    proto.set_type(kStringType);
    proto.set_content(blob.Get<std::string>());
  } else {
    HN_THROW(kUnsupported, "cannot serialize blob '", name, "': it holds ", blob.TypeName(),
             " (only tensors and strings serialize)");
  }
  std::string bytes;
  HN_CHECK_KIND(kRuntime, proto.SerializeToString(&bytes), "cannot serialize blob '", name,
                "' (over the 2 GiB protobuf limit?)");
  return bytes;
}

void DeserializeBlob(const std::string& bytes, Blob* blob, const std::string& what) {
  caffe2::BlobProto proto;
  HN_ENFORCE(proto.ParseFromString(bytes), what, ": ", bytes.size(), " bytes that are not a serialized BlobProto");
  if (proto.type() == kStringType) {
    blob->Reset(std::make_shared<std::string>(proto.content()));
  } else if (proto.type().empty() || proto.type() == "Tensor") {
    auto t = std::make_shared<Tensor>(TensorFromBlobProto(proto));
    blob->Reset(std::move(t));
  } else {
    HN_THROW(kUnsupported, what, ": blob type '", proto.type(),
             "' cannot be deserialized (only Tensor and std::string)");
  }
}

}  // namespace hetnet
