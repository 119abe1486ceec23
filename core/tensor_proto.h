// caffe2.TensorProto / BlobProto <-> hetnet::Tensor, wire-compatible with Caffe2 in both directions.
// Reading accepts every place Caffe2 versions put data (typed fields, byte_data, raw_data, bfloat16);
// writing uses the fields Caffe2's own serializer uses, so Caffe2 loads what we write.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "proto/caffe2.pb.h"

namespace hetnet {

// A CPU tensor from a proto. Element count must match dims (or the segment for a chunk);
// errors (kInvalidArgument) name the tensor.
Tensor TensorFromProto(const caffe2::TensorProto& proto);

// Fills `dst` from a proto. A proto with a segment fills only elements [begin, end) of `dst`,
// which is (re)allocated on CPU when its shape or dtype differ from the proto's.
void DeserializeTensorProtoInto(const caffe2::TensorProto& proto, Tensor* dst);

// Serializes elements [begin, end) of `t` (all when end < 0; a segment is set for a partial range).
// GPU tensors are copied to the host first.
caffe2::TensorProto TensorToProto(const Tensor& t, const std::string& name = "", int64_t begin = 0,
                                  int64_t end = -1);

// BlobProto with type "Tensor".
caffe2::BlobProto TensorToBlobProto(const Tensor& t, const std::string& name);
// Splits a tensor into BlobProtos of at most chunk_size elements each (Caffe2's chunked form).
std::vector<caffe2::BlobProto> TensorToChunkedBlobProtos(const Tensor& t, const std::string& name,
                                                         int64_t chunk_size);
Tensor TensorFromBlobProto(const caffe2::BlobProto& blob);
// Reassembles chunks (any order); every element must be covered exactly once.
Tensor TensorFromBlobProtos(const std::vector<caffe2::BlobProto>& chunks);

}  // namespace hetnet
