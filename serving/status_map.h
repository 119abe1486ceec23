// Error kinds to protocol status codes, the one table both front ends use (Triton's mapping,
// serving-facts §2.3; gRPC codes are numbered as grpc::StatusCode).
#pragma once

#include "core/error.h"

namespace hetnet::serving {

inline int HttpStatusOf(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument: return 400;
    case ErrorKind::kNotFound: return 404;
    case ErrorKind::kUnavailable:
    case ErrorKind::kIo: return 503;
    case ErrorKind::kTimeout: return 504;
    case ErrorKind::kUnsupported: return 501;
    case ErrorKind::kOutOfMemory:
    case ErrorKind::kRuntime: return 500;
  }
  return 500;
}

// grpc::StatusCode values (kept numeric so this header needs no gRPC include).
inline int GrpcStatusOf(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument: return 3;   // INVALID_ARGUMENT
    case ErrorKind::kNotFound: return 5;          // NOT_FOUND
    case ErrorKind::kUnavailable:
    case ErrorKind::kIo: return 14;               // UNAVAILABLE
    case ErrorKind::kTimeout: return 4;           // DEADLINE_EXCEEDED
    case ErrorKind::kUnsupported: return 12;      // UNIMPLEMENTED
    case ErrorKind::kOutOfMemory: return 8;       // RESOURCE_EXHAUSTED
    case ErrorKind::kRuntime: return 13;          // INTERNAL
  }
  return 13;
}

// The text a client sees: the cause, then the context lines (which op, which blob) on one line.
std::string ClientMessage(const Error& e);

}  // namespace hetnet::serving
