#include "serving/inference_server.h"

#include <atomic>
#include <condition_variable>
#include <future>
#include <sstream>

#include "core/error.h"
#include "serving/metrics.h"
#include "serving/model_registry.h"
#include "serving/request_memory.h"
#include "serving/request_tensors.h"
#include "serving/system_shared_memory.h"
#include "serving/tensor_codec.h"

namespace hetnet::serving {

const char* ServerVersion() { return "0.1.0"; }

// Requests accepted and not yet answered, over all models (for draining at shutdown).
struct InferenceServer::Inflight {
  std::mutex mu;
  std::condition_variable cv;
  int64_t count = 0;
  std::atomic<bool> accepting{true};
};

namespace {
std::string JsonEscape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      o += buf;
    } else {
      o += c;
    }
  }
  return o;
}
}  // namespace

InferenceServer::InferenceServer(ServerOptions options)
    : options_(std::move(options)),
      inflight_(std::make_unique<Inflight>()),
      request_memory_(std::make_unique<RequestMemoryBudget>(
          options_.max_request_memory < 0 ? DefaultRequestMemoryLimit()
                                          : static_cast<uint64_t>(options_.max_request_memory))),
      shared_memory_(std::make_unique<SystemSharedMemory>(options_.allow_client_shm)),
      registry_(std::make_unique<ModelRegistry>(options_)) {
  registry_->LoadAtStartup();
}

InferenceServer::~InferenceServer() = default;

bool InferenceServer::IsLive() const { return true; }

bool InferenceServer::IsReady() const {
  if (!accepting()) return false;
  return !options_.strict_readiness || registry_->AllReady();
}

inference::ServerMetadataResponse InferenceServer::ServerMetadata() const {
  inference::ServerMetadataResponse r;
  r.set_name("hetnet");
  r.set_version(ServerVersion());
  for (const char* e : {"binary_tensor_data", "model_configuration", "model_repository", "statistics",
                        "schedule_policy", "parameters", "hetnet_placement"})
    r.add_extensions(e);
  if (options_.allow_client_shm) r.add_extensions("system_shared_memory");
  return r;
}

bool InferenceServer::ModelReady(const std::string& name, const std::string& version) const {
  auto state = registry_->State(name);
  if (!state) HN_THROW(kNotFound, "Request for unknown model: '", name, "' is not found");
  if (state->versions.empty()) return false;  // known, but loading, failed or unloaded
  registry_->Find(name, version);             // throws kNotFound for a version that is not loaded
  return true;
}

inference::ModelMetadataResponse InferenceServer::ModelMetadata(const std::string& name,
                                                                const std::string& version) const {
  auto mv = registry_->Find(name, version);
  auto state = registry_->State(name);
  inference::ModelMetadataResponse r;
  r.set_name(name);
  for (const auto& [v, _] : state->versions) r.add_versions(std::to_string(v));
  r.set_platform("caffe2_netdef");
  const auto& config = mv->config();
  auto fill = [&](auto* t, const std::string& n, int type, const auto& dims) {
    t->set_name(n);
    t->set_datatype(ProtocolNameOfConfigType(type));
    if (config.max_batch_size() > 0) t->add_shape(-1);
    for (auto d : dims) t->add_shape(d);
  };
  for (const auto& in : config.input()) fill(r.add_inputs(), in.name(), in.data_type(), in.dims());
  for (const auto& out : config.output()) fill(r.add_outputs(), out.name(), out.data_type(), out.dims());
  return r;
}

inference::ModelConfig InferenceServer::ModelConfig(const std::string& name, const std::string& version) const {
  return registry_->Find(name, version)->config();
}

inference::ModelStatisticsResponse InferenceServer::ModelStatistics(const std::string& name,
                                                                    const std::string& version) const {
  inference::ModelStatisticsResponse r;
  if (!name.empty()) {
    auto mv = registry_->Find(name, version);
    if (version.empty()) {  // every loaded version
      for (const auto& [v, m] : registry_->State(name)->versions) m->stats().ToProto(name, std::to_string(v), r.add_model_stats());
    } else {
      mv->stats().ToProto(name, version, r.add_model_stats());
    }
    return r;
  }
  for (const auto& s : registry_->All())
    for (const auto& [v, m] : s->versions) m->stats().ToProto(s->name, std::to_string(v), r.add_model_stats());
  return r;
}

std::string InferenceServer::PlacementJson(const std::string& name, const std::string& version) const {
  auto mv = registry_->Find(name, version);
  PlacementReport p = mv->Placement();
  std::ostringstream o;
  o << "{\"model\":\"" << JsonEscape(name) << "\",\"version\":\"" << mv->version() << "\",\"ops\":[";
  for (size_t i = 0; i < p.ops.size(); ++i)
    o << (i ? "," : "") << "{\"index\":" << p.ops[i].index << ",\"type\":\"" << JsonEscape(p.ops[i].type)
      << "\",\"device\":\"" << p.ops[i].device.str() << "\",\"engine\":\"" << JsonEscape(p.ops[i].engine)
      << "\",\"reason\":\"" << JsonEscape(p.ops[i].reason) << "\"}";
  o << "],\"copies\":[";
  for (size_t i = 0; i < p.copies.size(); ++i)
    o << (i ? "," : "") << "{\"type\":\"" << p.copies[i].type << "\",\"src_blob\":\"" << JsonEscape(p.copies[i].src_blob)
      << "\",\"dst_blob\":\"" << JsonEscape(p.copies[i].dst_blob) << "\",\"src\":\"" << p.copies[i].from.str()
      << "\",\"dst\":\"" << p.copies[i].to.str() << "\",\"bytes\":" << p.copies[i].bytes << "}";
  o << "]}";
  return o.str();
}

std::string InferenceServer::PlacementSvg(const std::string& name, const std::string& version) const {
  std::string svg = DotToSvg(registry_->Find(name, version)->Placement().ToDot());
  if (svg.empty()) HN_THROW(kUnsupported, "placement SVG needs Graphviz's `dot` on the server's PATH");
  return svg;
}

inference::RepositoryIndexResponse InferenceServer::RepositoryIndex(bool ready_only) const {
  inference::RepositoryIndexResponse r;
  std::map<std::string, std::shared_ptr<const ModelState>> states;
  for (const auto& s : registry_->All()) states[s->name] = s;
  for (const auto& [name, dir] : registry_->ScanRepositories()) {
    auto it = states.find(name);
    if (it == states.end()) {
      if (ready_only) continue;
      auto* m = r.add_models();
      m->set_name(name);
      continue;
    }
    const auto& s = it->second;
    if (s->versions.empty()) {
      if (ready_only) continue;
      auto* m = r.add_models();
      m->set_name(name);
      m->set_state(s->state);
      m->set_reason(s->reason);
    }
    for (const auto& [v, _] : s->versions) {
      auto* m = r.add_models();
      m->set_name(name);
      m->set_version(std::to_string(v));
      m->set_state("READY");
    }
  }
  return r;
}

void InferenceServer::LoadModel(const std::string& name, const std::string& config_json,
                                const std::map<std::string, std::string>& files) {
  if (options_.control_mode != ModelControlMode::kExplicit)
    HN_THROW(kUnavailable, "explicit model load / unload is not allowed if polling is enabled or if the server "
                           "is not in explicit model control mode");
  registry_->Load(name, config_json, files);
}

void InferenceServer::UnloadModel(const std::string& name) {
  if (options_.control_mode != ModelControlMode::kExplicit)
    HN_THROW(kUnavailable, "explicit model load / unload is not allowed if polling is enabled or if the server "
                           "is not in explicit model control mode");
  registry_->Unload(name);
}

void InferenceServer::InferAsync(std::unique_ptr<InferRequest> request, InferCallback done,
                                 RequestMemoryLease* memory) {
  Inflight& f = *inflight_;
  if (!f.accepting) {
    done(InferResult{nullptr, Error(ErrorKind::kUnavailable, "Server is shutting down")});
    return;
  }
  std::shared_ptr<ModelVersion> mv;
  try {
    mv = registry_->Find(request->model_name, request->model_version);
    ReadSharedMemoryInputs(*shared_memory_, request.get(), memory);
    if (!request->output_shared_memory.empty()) {
      auto targets = SharedMemoryTargets(*shared_memory_, *request);
      done = [targets = std::move(targets), next = std::move(done)](InferResult r) mutable {
        WriteSharedMemoryOutputs(targets, &r);
        next(std::move(r));
      };
    }
  } catch (const Error& e) {
    done(InferResult{nullptr, e});
    return;
  }
  {
    std::lock_guard<std::mutex> lock(f.mu);
    ++f.count;
  }
  // The version stays alive until the request is answered: a reload retires it only when idle, and
  // the callback must not hold it (its last reference would then die on its own worker thread).
  mv->Enqueue(std::move(request), [done = std::move(done), &f](InferResult r) mutable {
    done(std::move(r));
    std::lock_guard<std::mutex> lock(f.mu);
    if (--f.count == 0) f.cv.notify_all();
  });
}

InferResult InferenceServer::Infer(std::unique_ptr<InferRequest> request) {
  std::promise<InferResult> p;
  auto fut = p.get_future();
  InferAsync(std::move(request), [&p](InferResult r) { p.set_value(std::move(r)); });
  return fut.get();
}

std::string InferenceServer::MetricsText() const {
  std::vector<std::shared_ptr<ModelVersion>> versions;
  for (const auto& s : registry_->All())
    for (const auto& [v, m] : s->versions) versions.push_back(m);
  return RenderMetrics(versions, request_memory_.get());
}

void InferenceServer::StopAccepting() { inflight_->accepting = false; }
bool InferenceServer::accepting() const { return inflight_->accepting; }

bool InferenceServer::WaitForIdle(std::chrono::milliseconds timeout) {
  Inflight& f = *inflight_;
  std::unique_lock<std::mutex> lock(f.mu);
  return f.cv.wait_for(lock, timeout, [&] { return f.count == 0; });
}

size_t InferenceServer::InflightRequests() const {
  std::lock_guard<std::mutex> lock(inflight_->mu);
  return static_cast<size_t>(inflight_->count);
}

}  // namespace hetnet::serving
