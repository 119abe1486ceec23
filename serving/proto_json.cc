#include "serving/proto_json.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/util/json_util.h>
#include <rapidjson/document.h>
#include <rapidjson/writer.h>

#include "core/error.h"
#include "core/json_document.h"

namespace hetnet::serving {
namespace {

namespace pb = google::protobuf;

bool Is64Bit(const pb::FieldDescriptor* f) {
  return f->cpp_type() == pb::FieldDescriptor::CPPTYPE_INT64 || f->cpp_type() == pb::FieldDescriptor::CPPTYPE_UINT64;
}

void FixValue(rapidjson::Value& v, const pb::FieldDescriptor* f, rapidjson::Document::AllocatorType& a);

// Protobuf's JSON prints 64-bit integers as strings; Triton's clients expect numbers (config
// version 1). Walks the JSON alongside the descriptor and converts them in place.
void FixMessage(rapidjson::Value& obj, const pb::Descriptor* d, rapidjson::Document::AllocatorType& a) {
  if (!obj.IsObject()) return;
  for (auto& m : obj.GetObject()) {
    const pb::FieldDescriptor* f = d->FindFieldByName(m.name.GetString());
    if (!f) continue;
    if (f->is_map()) {
      const pb::FieldDescriptor* value_field = f->message_type()->FindFieldByName("value");
      if (m.value.IsObject())
        for (auto& e : m.value.GetObject()) FixValue(e.value, value_field, a);
    } else if (f->is_repeated() && m.value.IsArray()) {
      for (auto& e : m.value.GetArray()) FixValue(e, f, a);
    } else {
      FixValue(m.value, f, a);
    }
  }
}

void FixValue(rapidjson::Value& v, const pb::FieldDescriptor* f, rapidjson::Document::AllocatorType& a) {
  if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
    FixMessage(v, f->message_type(), a);
  } else if (Is64Bit(f) && v.IsString()) {
    const char* s = v.GetString();
    if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_INT64)
      v.SetInt64(std::strtoll(s, nullptr, 10));
    else
      v.SetUint64(std::strtoull(s, nullptr, 10));
  }
}

}  // namespace

std::string ToTritonJson(const google::protobuf::Message& message) {
  pb::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = true;
  opts.always_print_primitive_fields = true;
  std::string json;
  auto status = pb::util::MessageToJsonString(message, &json, opts);
  if (!status.ok()) HN_THROW(kRuntime, "cannot print ", message.GetTypeName(), " as JSON: ", status.ToString());
  rapidjson::Document doc;
  if (!ParseJsonDocument(json, &doc).ok) return json;
  FixMessage(doc, message.GetDescriptor(), doc.GetAllocator());
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  doc.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

void FromJson(const std::string& json, google::protobuf::Message* message, const std::string& what) {
  pb::util::JsonParseOptions opts;
  opts.ignore_unknown_fields = false;
  auto status = pb::util::JsonStringToMessage(json, message, opts);
  if (!status.ok()) HN_THROW(kInvalidArgument, what, ": ", status.message());
}

}  // namespace hetnet::serving
