#include "serving/http_shared_memory.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/error.h"
#include "serving/http_infer_codec.h"
#include "serving/inference_server.h"
#include "serving/system_shared_memory.h"

namespace hetnet::serving {
namespace {

uint64_t UnsignedMember(const rapidjson::Value& doc, const char* key, bool required) {
  auto it = doc.FindMember(key);
  if (it == doc.MemberEnd()) {
    HN_CHECK_KIND(kInvalidArgument, !required, "the register request needs '", key, "'");
    return 0;
  }
  HN_CHECK_KIND(kInvalidArgument, it->value.IsUint64(), "'", key, "' must be a non-negative integer");
  return it->value.GetUint64();
}

std::string StatusJson(const std::vector<SharedMemoryRegionStatus>& regions) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartArray();
  for (const auto& r : regions) {
    w.StartObject();
    w.Key("name");
    w.String(r.name.data(), static_cast<rapidjson::SizeType>(r.name.size()));
    w.Key("key");
    w.String(r.key.data(), static_cast<rapidjson::SizeType>(r.key.size()));
    w.Key("offset");
    w.Uint64(r.offset);
    w.Key("byte_size");
    w.Uint64(r.byte_size);
    w.EndObject();
  }
  w.EndArray();
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace

HttpReply SharedMemoryReply(InferenceServer* server, const Route& route, const std::string& body) {
  SystemSharedMemory& shm = server->shared_memory();
  switch (route.op) {
    case Op::kShmStatus:
      return HttpReply::Json(200, StatusJson(shm.Status(route.region)));
    case Op::kShmRegister: {
      rapidjson::Document doc;
      ParseJson(body, &doc);
      HN_CHECK_KIND(kInvalidArgument, doc.IsObject(), "the register request must be a JSON object");
      auto key = doc.FindMember("key");
      HN_CHECK_KIND(kInvalidArgument, key != doc.MemberEnd() && key->value.IsString(),
                    "the register request needs 'key', a string");
      shm.Register(route.region, std::string(key->value.GetString(), key->value.GetStringLength()),
                   UnsignedMember(doc, "offset", false), UnsignedMember(doc, "byte_size", true));
      return HttpReply::Json(200, "{}");
    }
    case Op::kShmUnregister:
      shm.Unregister(route.region);
      return HttpReply::Json(200, "{}");
    default:
      HN_THROW(kUnsupported, "CUDA shared memory is not supported by hetnet; use system shared memory");
  }
}

}  // namespace hetnet::serving
