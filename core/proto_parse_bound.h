// How much memory protobuf's parse of a message will take, read from its wire bytes before parsing.
// A message's wire form can be far smaller than the parse: 2 bytes of an empty repeated message
// (`op {}`, an ONNX node, a gRPC input tensor) become a ~200-byte object, 2 bytes of an empty
// bytes entry a 32-byte std::string and a pointer, 1 byte of a packed int64 becomes 8. A 20 MB
// model.netdef of empty ops made `hetnet serve` peak at 2.15 GB, a 40 MB ModelInferRequest of empty
// bytes_contents at 1.3 GB. Binary model and tensor files are checked against the
// proto-parse-memory cap (core/proto_io.h); the gRPC front end charges the bound to its request
// memory budget.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace google::protobuf {
class Descriptor;
namespace io {
class ZeroCopyInputStream;
}
}  // namespace google::protobuf

namespace hetnet {

struct ParseBound {
  bool ok = false;     // the bytes walk as a whole message of the type
  uint64_t bytes = 0;  // an upper bound on the heap the parse allocates (object included); when
                       // not ok, on what a parse allocates before it finds the fault
  std::string error;   // when not ok: why the bytes are not a message of that type
};

// Walks the wire bytes (`total_bytes` of them) as a message of `type` without building it: fields
// are sized by their C++ form (repeated fields at twice their elements, as their capacity may
// double, plus their first block; strings with their header and heap block; each submessage at its
// object size, map entries with their node, key and value; unknown fields and enum values the type
// does not know in the unknown field set). Fails on truncated or malformed input, on groups, and
// on nesting deeper than `max_depth` (protobuf's own default is 100): the parse would refuse those
// too, after allocating up to `bytes`.
ParseBound BoundParsedSize(const google::protobuf::Descriptor* type, google::protobuf::io::ZeroCopyInputStream* wire,
                           uint64_t total_bytes, int max_depth = 100);

// The same for protobuf text format, by counting what can start a message, a value or a list item
// (braces, colons, commas, wherever they stand: a bound, not an estimate). Text parses grow too:
// "op{}" is 4 characters and a ~200-byte OperatorDef.
uint64_t BoundTextParsedSize(const google::protobuf::Descriptor* type, std::string_view text);

}  // namespace hetnet
