// What a protocol front end (HTTP, gRPC) hands to the InferenceServer and gets back. Front ends
// only translate their wire format into these structs; validation against the model's config,
// batching and execution live in the server, once for every protocol.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"
#include "serving/system_shared_memory.h"

namespace hetnet::serving {

// One input tensor as the protocol carried it: row-major, little-endian, no padding; BYTES elements
// as a 4-byte little-endian length followed by the bytes; BOOL one byte each. `data` points into
// memory that `holder` keeps alive (the HTTP body, the gRPC message, a buffer decoded from JSON), so
// the server copies it once, straight into the tensor the model instance reads.
struct InferInput {
  std::string name;
  std::string datatype;  // protocol name: "FP32", "INT64", "BYTES", ...
  std::vector<int64_t> shape;
  const char* data = nullptr;
  size_t byte_size = 0;
  std::shared_ptr<const void> holder;
  // Set instead of data: the bytes are in a registered shared memory region, read when the server
  // accepts the request.
  std::optional<SharedMemoryRef> shared_memory;
};

struct InferRequest {
  std::string model_name;
  std::string model_version;  // "" = the version the model's policy serves (highest ready)
  std::string id;             // echoed in the response
  std::vector<InferInput> inputs;
  std::vector<std::string> requested_outputs;  // empty = every output, in config order
  // Requested outputs to be written into shared memory rather than sent back.
  std::map<std::string, SharedMemoryRef> output_shared_memory;
  uint64_t priority = 0;                       // 0 = the model's default level; 1 is highest
  uint64_t timeout_us = 0;                     // 0 = the model's default queue timeout
  std::chrono::steady_clock::time_point received = std::chrono::steady_clock::now();
};

// One output: a host tensor (fixed-size types hold the wire bytes as they are; BYTES tensors hold
// std::string elements, see EncodeBytesTensor in tensor_codec.h).
struct InferOutput {
  std::string name;
  std::string datatype;
  std::vector<int64_t> shape;
  Tensor tensor;  // empty once written to shared memory
  std::optional<SharedMemoryRef> shared_memory;  // where the server wrote it; the response carries no data
};

struct InferResponse {
  std::string model_name;
  std::string model_version;
  std::string id;
  std::vector<InferOutput> outputs;  // in requested order, or config order when none was requested
};

// Either a response or an error whose kind maps to a protocol status (status_map.h).
struct InferResult {
  std::unique_ptr<InferResponse> response;
  std::optional<Error> error;
};

// Called exactly once per accepted request, from a server thread (never the caller's, unless the
// request is refused before it is queued). It must not block for long.
using InferCallback = std::function<void(InferResult)>;

}  // namespace hetnet::serving
