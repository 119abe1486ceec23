// Requests against a model's config: validation with Triton's messages (serving-facts §7 #21),
// building the batch's input tensors (each request's bytes copied once, straight into the tensor
// the instance reads) and splitting the outputs back per request; inputs read from and outputs
// written to system shared memory.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "serving/dynamic_batcher.h"
#include "serving/proto/model_config.pb.h"

namespace hetnet::serving {

// Checks inputs, datatypes, shapes, byte sizes, requested outputs; sets batch_size and shape_key.
void ValidateRequest(const inference::ModelConfig& config, int64_t max_tensor_elements, QueuedRequest* queued);

// One tensor per config input (in config order; an omitted optional input is left undefined),
// shaped [sum of batches] + dims (or the config's reshape). `pinned` asks for page-locked memory
// (the instance copies the inputs to a GPU). Returns the bytes copied from requests.
std::vector<Tensor> BuildInputs(const inference::ModelConfig& config, const DynamicBatcher::Batch& batch,
                                bool pinned, size_t* bytes_copied);

// The outputs of request `index` of the batch: rows [row, row + batch_size) of each net output
// (the whole tensor when the batch holds one request), named and shaped as the config says.
std::vector<InferOutput> SliceOutputs(const inference::ModelConfig& config, const std::vector<std::string>& net_outputs,
                                      const std::vector<Tensor>& tensors, const InferRequest& request, int64_t row,
                                      int64_t batch_size, bool whole);

// ---- system shared memory (serving/system_shared_memory.h) ----

// Reads the request's shared-memory inputs into buffers of their own (InferInput::data), charged to
// `memory` (may be null).
void ReadSharedMemoryInputs(const SystemSharedMemory& shm, InferRequest* request, RequestMemoryLease* memory);
// Where the outputs asked in shared memory go, resolved before the request is queued (an unknown
// region or a range outside it is refused at once).
std::map<std::string, SharedMemoryTarget> SharedMemoryTargets(const SystemSharedMemory& shm,
                                                              const InferRequest& request);
// Writes those outputs there; the response keeps only their metadata. A failure turns the result
// into that error.
void WriteSharedMemoryOutputs(const std::map<std::string, SharedMemoryTarget>& targets, InferResult* result);

}  // namespace hetnet::serving
