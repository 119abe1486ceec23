// Reading and writing Caffe2 protos (NetDef, TensorProto, TensorProtos, BlobProto, ...) from files
// and strings. Like Caffe2, input is tried as binary wire format first, then as protobuf text format.
// Every failure is a hetnet::Error naming the file (or source) and the message type expected.
#pragma once

#include <string>

#include "proto/caffe2.pb.h"

namespace google { namespace protobuf { class Descriptor; class Message; } }

namespace hetnet {

// Whole file as bytes. kNotFound for a missing file, kRuntime for other read failures.
std::string ReadFileBytes(const std::string& path);
// Writes bytes atomically enough for tools (truncate + write). kRuntime on failure.
void WriteFileBytes(const std::string& path, const std::string& bytes);

// Parses `data` into `msg`: binary first, then text format. `source` names the data in errors
// (a file path or "<string>"). kInvalidArgument when neither parse succeeds or data is empty.
void ParseProtoFromString(const std::string& data, google::protobuf::Message* msg,
                          const std::string& source = "<string>");
// Refuses binary bytes whose parse as `type` would take more memory than the proto-parse-memory cap
// (kOutOfMemory naming HETNET_MAX_PROTO_PARSE_BYTES), bounded from the bytes before parsing
// (core/proto_parse_bound.h): 20 MB of empty `op {}` entries parse into 2 GB of OperatorDefs.
// Bytes that do not walk as `type` are bounded up to their fault, where the parse gives up. Text-format parses are
// checked the same way, by a bound counted from the text (BoundTextParsedSize).
void CheckProtoParseMemory(const std::string& data, const google::protobuf::Descriptor* type,
                           const std::string& source);
// The nesting cap every protobuf parse here sets (the limit kMaxProtoDepth): the text parser's own
// default is unlimited, and a few kB of "op { arg { n { ..." overflowed the stack.
int ProtoDepthCap();

// Text format only (a .pbtxt file), under the same size and nesting caps.
void ParseTextProtoFromString(const std::string& data, google::protobuf::Message* msg,
                              const std::string& source = "<string>");
void ReadProtoFromFile(const std::string& path, google::protobuf::Message* msg);

// Serialized bytes: binary wire format, or text format when `text` is true.
std::string SerializeProto(const google::protobuf::Message& msg, bool text = false);
void WriteProtoToFile(const std::string& path, const google::protobuf::Message& msg, bool text = false);

// Typed conveniences for the messages tools read most.
caffe2::NetDef ReadNetDef(const std::string& path);
caffe2::TensorProto ReadTensorProto(const std::string& path);
caffe2::TensorProtos ReadTensorProtos(const std::string& path);
caffe2::BlobProto ReadBlobProto(const std::string& path);

}  // namespace hetnet
