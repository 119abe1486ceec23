// The REST routes of the system shared memory extension (serving-facts §2.1): status, register,
// unregister, answered from the server's SystemSharedMemory. CUDA shared memory is not supported.
#pragma once

#include <string>

#include "serving/http_routes.h"
#include "serving/http_server.h"

namespace hetnet::serving {

class InferenceServer;

// The answer to a shared-memory route (Op::kShmStatus, kShmRegister, kShmUnregister, kCudaShm);
// `body` is the request body (register: {"key", "offset", "byte_size"}). Throws hetnet::Error.
HttpReply SharedMemoryReply(InferenceServer* server, const Route& route, const std::string& body);

}  // namespace hetnet::serving
