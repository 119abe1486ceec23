// The URL table of the KServe v2 / Triton REST API (serving-facts §2.1; requirements 14, 26, 35):
// which operation a request target names, with its model and version.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace hetnet::serving {

enum class Op {
  kNone,
  kLive,
  kReady,
  kServerMetadata,
  kModelMetadata,
  kModelReady,
  kModelConfig,
  kModelStats,
  kPlacement,
  kInfer,
  kRepoIndex,
  kRepoLoad,
  kRepoUnload,
  kShmStatus,      // v2/systemsharedmemory[/region/<r>]/status
  kShmRegister,    // v2/systemsharedmemory/region/<r>/register
  kShmUnregister,  // v2/systemsharedmemory[/region/<r>]/unregister
  kCudaShm,        // v2/cudasharedmemory/...: not supported (answered 501)
};

struct Route {
  Op op = Op::kNone;
  const char* method = "GET";
  std::string model;
  std::string version;
  std::string region;  // shared memory routes: the region named in the path ("" = all)
  bool health = false;
};

// The route of a request target (path and query as sent; %XX decoded per segment): Op::kNone for a
// path the API does not have, nullopt for a malformed one (both answer 404).
std::optional<Route> RouteOf(std::string_view target);
// The value of `key` in a query string ("a=1&b=2"; %XX and '+' decoded), "" when absent.
std::string QueryValue(std::string_view query, std::string_view key);

}  // namespace hetnet::serving
