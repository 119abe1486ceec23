// Whole blobs <-> serialized caffe2.BlobProto bytes (Caffe2's SerializeBlob / DeserializeBlob):
// a Tensor as type "Tensor" (core/tensor_proto.h), a std::string as type "std::string" with the
// bytes in `content`. Store ops move blobs between processes this way.
#pragma once

#include <string>

#include "core/blob.h"

namespace hetnet {

// kUnsupported for blobs holding anything else (a store handler, a common world, nothing).
std::string SerializeBlob(const Blob& blob, const std::string& name);
// Replaces what `blob` held. kInvalidArgument for bytes that are not a BlobProto, kUnsupported for
// other types; `what` names the source in errors ("StoreGet: key 'x'").
void DeserializeBlob(const std::string& bytes, Blob* blob, const std::string& what);

}  // namespace hetnet
