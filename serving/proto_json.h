// Protobuf messages as Triton's JSON: original field names, default-valued fields printed, int64 and
// uint64 as JSON numbers (protobuf prints them as strings), enums by name. The HTTP front end answers
// metadata, config, statistics and the repository index with it, from the same messages gRPC sends.
#pragma once

#include <string>

#include <google/protobuf/message.h>

namespace hetnet::serving {

std::string ToTritonJson(const google::protobuf::Message& message);
// JSON (numbers or strings for int64) into a message; throws kInvalidArgument naming `what`.
void FromJson(const std::string& json, google::protobuf::Message* message, const std::string& what);

}  // namespace hetnet::serving
