#include "core/proto_parse_bound.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/message.h>
#include <google/protobuf/wire_format_lite.h>

#include "core/error.h"

namespace hetnet {
namespace {

namespace pb = google::protobuf;
using pb::FieldDescriptor;
using pb::internal::WireFormatLite;

constexpr uint64_t kStringCost = sizeof(std::string) + 16;  // the object and a heap block's header
constexpr uint64_t kPointerCost = 2 * sizeof(void*);        // a repeated element's slot, capacity doubled
constexpr uint64_t kMapNodeCost = 64;                       // a hash node and its bucket
// A repeated field's first allocation: its header and the smallest capacity (4 elements, up to
// 8 bytes each, or 4 pointers).
constexpr uint64_t kRepeatedFirstCost = 48;

// The object size of a message type (its default instance's SpaceUsedLong: every field in place).
uint64_t ObjectSize(const pb::Descriptor* d) {
  // A map's entries live as hash nodes (kMapNodeCost) holding the key and value, which are costed
  // as the entry's fields; the generated factory has no prototype for an entry type.
  if (d->options().map_entry()) return 0;
  static std::mutex mu;
  static std::map<const pb::Descriptor*, uint64_t> sizes;
  std::lock_guard<std::mutex> lock(mu);
  auto it = sizes.find(d);
  if (it != sizes.end()) return it->second;
  const pb::Message* prototype = pb::MessageFactory::generated_factory()->GetPrototype(d);
  // Plus an unknown-field set, which a message may carry empty (a text parse's copy makes one).
  const uint64_t size = (prototype ? static_cast<uint64_t>(prototype->SpaceUsedLong()) : 256) + 48;
  sizes.emplace(d, size);
  return size;
}

// A map entry's node with a key and a value in it even when the wire sends neither (an empty entry
// makes the parse insert the key "" with a default value); what is sent is costed on top.
uint64_t MapEntryCost(const pb::Descriptor* entry) {
  const FieldDescriptor* value = entry->map_value();
  const uint64_t value_cost = value->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE ? ObjectSize(value->message_type())
                              : value->cpp_type() == FieldDescriptor::CPPTYPE_STRING ? kStringCost
                                                                                     : 8;
  return kMapNodeCost + kStringCost + value_cost;
}

// An enum value the type does not know goes to the unknown field set (proto2): a 16-byte entry
// in a vector that may double, and the set itself for the first one.
constexpr uint64_t kUnknownValueCost = 64;

// Bytes of a scalar value's C++ form (each value of a singular field is in the object already).
uint64_t ScalarSize(const FieldDescriptor* f) {
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_BOOL:
      return 1;
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_FLOAT:
    case FieldDescriptor::CPPTYPE_ENUM:
      return 4;
    default:
      return 8;
  }
}

// The wire type a field's values take one at a time (packed repeated scalars also come length-delimited).
WireFormatLite::WireType ValueWireType(const FieldDescriptor* f) {
  return static_cast<WireFormatLite::WireType>(WireFormatLite::WireTypeForFieldType(
      static_cast<WireFormatLite::FieldType>(f->type())));
}

class Scanner {
 public:
  Scanner(pb::io::CodedInputStream* in, uint64_t total, int max_depth)
      : in_(in), total_(total), max_depth_(max_depth) {}

  // Scans fields until the current limit (or the end of input); adds their cost to *cost.
  bool Message(const pb::Descriptor* d, int depth, uint64_t* cost) {
    if (depth > max_depth_) return Fail(MakeString("messages nest deeper than ", max_depth_, " levels"));
    std::vector<const FieldDescriptor*> repeated_seen;  // few per message type
    // A run of one repeated scalar (unpacked weights: GivenTensorFill's floats) skips the lookups.
    uint32_t last_tag = 0;
    uint64_t last_cost = 0;
    while (true) {
      const uint32_t tag = in_->ReadTag();
      if (tag == 0) {  // the end of the message (its limit or the input's end), or a bad tag
        if (in_->ConsumedEntireMessage()) return true;
        return Fail("malformed field tag");
      }
      const auto wire = WireFormatLite::GetTagWireType(tag);
      if (tag == last_tag) {  // one more value of the repeated scalar just seen
        uint64_t value = 0;
        const bool read = wire == WireFormatLite::WIRETYPE_FIXED32   ? in_->Skip(4)
                          : wire == WireFormatLite::WIRETYPE_FIXED64 ? in_->Skip(8)
                                                                     : in_->ReadVarint64(&value);
        if (!read) return Fail("truncated field");
        *cost += last_cost;
        continue;
      }
      // An end-group tag ends the parse (the message is then not consumed whole); a group is kept
      // as an unknown field (no type here has groups).
      if (wire == WireFormatLite::WIRETYPE_END_GROUP) return Fail("an end-group tag outside a group");
      const FieldDescriptor* f = d->FindFieldByNumber(WireFormatLite::GetTagFieldNumber(tag));
      if (f == nullptr || !(wire == ValueWireType(f) || (wire == WireFormatLite::WIRETYPE_LENGTH_DELIMITED &&
                                                         f->is_packable()))) {
        if (!Unknown(tag, cost)) return false;
        continue;
      }
      if (f->is_repeated() && std::find(repeated_seen.begin(), repeated_seen.end(), f) == repeated_seen.end()) {
        repeated_seen.push_back(f);
        *cost += kRepeatedFirstCost;
      }
      if (f->is_repeated() && wire != WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
        last_tag = tag;
        last_cost = f->cpp_type() == FieldDescriptor::CPPTYPE_ENUM ? kUnknownValueCost : 2 * ScalarSize(f);
      }
      if (!Field(f, wire, depth, cost)) return false;
    }
  }

  const std::string& error() const { return error_; }

 private:
  bool Fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    return false;
  }

  // Protobuf keeps an unknown field's bytes in the message's unknown field set; a group's fields go
  // into nested sets, up to ~32 bytes for each byte (an empty group is 2 bytes and an entry with a
  // set of its own).
  bool Unknown(uint32_t tag, uint64_t* cost) {
    const int before = in_->CurrentPosition();
    const bool skipped = WireFormatLite::SkipField(in_, tag);
    const uint64_t consumed = static_cast<uint64_t>(in_->CurrentPosition() - before);
    const bool group = WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_START_GROUP;
    *cost += (group ? 32 : 2) * consumed + kStringCost + kUnknownValueCost / 2;  // its string, its entry
    return skipped || Fail("truncated field");
  }

  bool Field(const FieldDescriptor* f, WireFormatLite::WireType wire, int depth, uint64_t* cost) {
    const bool repeated = f->is_repeated();
    if (wire != WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {  // one scalar value
      const uint32_t tag = WireFormatLite::MakeTag(f->number(), wire);
      if (!WireFormatLite::SkipField(in_, tag)) return Fail("truncated field");
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_ENUM) *cost += kUnknownValueCost;
      else if (repeated) *cost += 2 * ScalarSize(f);
      return true;
    }
    uint32_t declared = 0;
    if (!in_->ReadVarint32(&declared)) return Fail("truncated length");
    // A length past the end: protobuf parses what is there before it finds the rest missing, so
    // that much is costed like a whole field, then the walk fails.
    const uint32_t length = std::min<uint64_t>(declared, Available());
    const bool cut = length < declared;
    bool ok = true;
    switch (f->type()) {
      case FieldDescriptor::TYPE_STRING:
      case FieldDescriptor::TYPE_BYTES:
        ok = in_->Skip(static_cast<int>(length));
        *cost += kStringCost + length + (repeated ? kPointerCost : 0);
        break;
      case FieldDescriptor::TYPE_MESSAGE: {
        *cost += LocalObjectSize(f->message_type()) + (repeated ? kPointerCost : 0);
        if (f->is_map()) *cost += MapEntryCost(f->message_type());
        const auto limit = in_->PushLimit(static_cast<int>(length));
        ok = Message(f->message_type(), depth + 1, cost);
        in_->PopLimit(limit);
        break;
      }
      default:
        ok = Packed(f, length, cost);
    }
    if (cut) return Fail("a field's length runs past the end of its message");
    return ok;
  }

  // ObjectSize through a cache of this walk's own: the shared one takes a lock, and a walk asks once
  // per submessage (a million empty ops, a million times).
  uint64_t LocalObjectSize(const pb::Descriptor* d) {
    if (d == last_type_) return last_size_;
    last_type_ = d;
    last_size_ = ObjectSize(d);
    return last_size_;
  }

  // Bytes left to read: to the current limit, or to the end of the input.
  uint64_t Available() const {
    const int to_limit = in_->BytesUntilLimit();
    const uint64_t to_end = total_ > static_cast<uint64_t>(in_->CurrentPosition())
                                ? total_ - static_cast<uint64_t>(in_->CurrentPosition())
                                : 0;
    const uint64_t left = to_limit >= 0 ? std::min<uint64_t>(static_cast<uint64_t>(to_limit), to_end) : to_end;
    return std::min<uint64_t>(left, INT32_MAX);
  }

  // A packed run of scalars: fixed-width ones by length, varints by counting their last bytes.
  bool Packed(const FieldDescriptor* f, uint32_t length, uint64_t* cost) {
    uint64_t count = 0;
    const auto wire = ValueWireType(f);
    if (wire == WireFormatLite::WIRETYPE_FIXED32 || wire == WireFormatLite::WIRETYPE_FIXED64) {
      count = length / (wire == WireFormatLite::WIRETYPE_FIXED32 ? 4 : 8);
      if (!in_->Skip(static_cast<int>(length))) return Fail("truncated packed field");
    } else {
      uint32_t left = length;
      while (left > 0) {
        const void* data = nullptr;
        int size = 0;
        if (!in_->GetDirectBufferPointer(&data, &size) || size <= 0) return Fail("truncated packed field");
        const uint32_t n = std::min<uint32_t>(left, static_cast<uint32_t>(size));
        const auto* bytes = static_cast<const uint8_t*>(data);
        for (uint32_t i = 0; i < n; ++i) count += bytes[i] < 0x80;
        in_->Skip(static_cast<int>(n));
        left -= n;
      }
    }
    *cost += count * (f->cpp_type() == FieldDescriptor::CPPTYPE_ENUM ? kUnknownValueCost : 2 * ScalarSize(f));
    return true;
  }

  pb::io::CodedInputStream* in_;
  const uint64_t total_;  // bytes of the whole input
  const pb::Descriptor* last_type_ = nullptr;
  uint64_t last_size_ = 0;
  const int max_depth_;
  std::string error_;
};

// The largest object among `type` and every message type reachable from its fields.
uint64_t LargestReachableObject(const pb::Descriptor* type) {
  static std::mutex mu;
  static std::map<const pb::Descriptor*, uint64_t> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(type);
    if (it != cache.end()) return it->second;
  }
  uint64_t largest = 0;
  std::vector<const pb::Descriptor*> stack{type}, seen{type};
  while (!stack.empty()) {
    const pb::Descriptor* d = stack.back();
    stack.pop_back();
    largest = std::max(largest, ObjectSize(d));
    for (int i = 0; i < d->field_count(); ++i) {
      const pb::Descriptor* m = d->field(i)->message_type();
      if (m && std::find(seen.begin(), seen.end(), m) == seen.end()) {
        seen.push_back(m);
        stack.push_back(m);
      }
    }
  }
  std::lock_guard<std::mutex> lock(mu);
  cache.emplace(type, largest);
  return largest;
}

}  // namespace

uint64_t BoundTextParsedSize(const pb::Descriptor* type, std::string_view text) {
  // Each opening brace can start a message (possibly a map entry in a repeated field), each colon a
  // field value (a string, or a scalar starting a repeated field), each comma a further list item.
  const uint64_t per_message = LargestReachableObject(type) + kPointerCost + kRepeatedFirstCost + kMapNodeCost +
                               kStringCost;
  const uint64_t per_value = kStringCost + kRepeatedFirstCost + kPointerCost;
  const uint64_t per_item = kStringCost + kPointerCost;
  uint64_t messages = 0, values = 0, items = 0;
  for (char c : text) {
    messages += c == '{' || c == '<';
    values += c == ':';
    items += c == ',';
  }
  return ObjectSize(type) + text.size() + messages * per_message + values * per_value + items * per_item;
}

ParseBound BoundParsedSize(const pb::Descriptor* type, pb::io::ZeroCopyInputStream* wire, uint64_t total_bytes,
                           int max_depth) {
  ParseBound result;
  pb::io::CodedInputStream in(wire);
  uint64_t cost = ObjectSize(type);
  Scanner scanner(&in, total_bytes, max_depth);
  result.ok = scanner.Message(type, 0, &cost);
  if (!result.ok) result.error = scanner.error();
  result.bytes = cost;
  return result;
}

}  // namespace hetnet
