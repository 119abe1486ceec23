// `hetnet serve`: a Triton-compatible model repository served over KServe v2 HTTP and gRPC, with
// Prometheus metrics. Flags keep Triton's names and defaults; addresses default to loopback.
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <iostream>
#include <memory>

#include "core/error.h"
#include "core/placement.h"
#include "serving/auth.h"
#include "serving/grpc_server.h"
#include "serving/http_server.h"
#include "serving/inference_server.h"
#include "tools/cli_common.h"

namespace hetnet_cli {

const char* const kServeHelp =
    "usage: hetnet serve --model-repository DIR [options]\n"
    "\n"
    "Serves the models of a Triton-style repository (DIR/<model>/config.pbtxt, DIR/<model>/<version>/\n"
    "model.netdef + init_model.netdef, or the zoo's predict_net.pb + init_net.pb) over the KServe v2\n"
    "protocol: HTTP/REST, gRPC (inference.GRPCInferenceService) and Prometheus metrics.\n"
    "\n"
    "  --model-repository DIR        repository, or one model's directory (repeatable)\n"
    "  --model-name NAME             name of the model when DIR is itself one model (default: its folder)\n"
    "  --model-control-mode MODE     none (load all at start, default) | explicit | poll\n"
    "  --load-model NAME             explicit mode: load at start (repeatable; * = all)\n"
    "  --repository-poll-secs N      poll mode: rescan interval (default 15)\n"
    "  --strict-readiness[=BOOL]     ready only when every model is ready (default true)\n"
    "  --exit-timeout-secs N         on SIGTERM/SIGINT, wait this long for requests in flight (default 30)\n"
    "  --http-address A / --http-port P        default 127.0.0.1:8000 (--allow-http=false: off)\n"
    "  --grpc-address A / --grpc-port P        default 127.0.0.1:8001 (--allow-grpc=false: off)\n"
    "  --metrics-address A / --metrics-port P  default 127.0.0.1:8002 (--allow-metrics=false: off)\n"
    "  --http-max-input-size BYTES   request body limit (default 67108864)\n"
    "  --http-max-connections N      open HTTP connections at most (default 1024)\n"
    "  --http-idle-timeout-secs N    idle keep-alive connections are closed after N s (default 60)\n"
    "  --http-thread-count N         HTTP I/O threads (default: cores)\n"
    "  --grpc-max-message-size BYTES gRPC send/receive limit (default 2147483647)\n"
    "  --queue-full-status CODE      HTTP status for a full model queue: 503 (default) or 429\n"
    "  --auth-token-file FILE        require 'Authorization: Bearer <token>' (HTTP) / authorization (gRPC)\n"
    "  --auth-health-open            health endpoints answer without the token\n"
    "  --max-tensor-elements N       largest input tensor accepted (default 268435456)\n"
    "  --max-batch-size N            largest max_batch_size a config may set (default 65536)\n"
    "  --max-request-memory BYTES    memory all requests in flight may hold (bodies, parse state);\n"
    "                                more is answered 503 / UNAVAILABLE (default: a third of RAM or of\n"
    "                                the cgroup's limit; 0 = no limit)\n"
    "  --allow-unsafe-ops            allow served nets to use ops that touch files or run code\n"
    "  --allow-client-shm[=BOOL]     clients may register system shared memory regions and pass\n"
    "                                tensors through them (Triton's flag; default false)\n"
    "  --log-verbose N               0 (default) or 1: log loads and errors\n"
    "  --soft-placement              without a usable GPU, run GPU ops and KIND_GPU groups on CPU\n"
    "  --strict                      an op on a GPU without a CUDA kernel is an error (no CPU fallback)\n";

namespace {

bool ParseBool(const std::string& flag, const std::string& v) {
  if (v == "true" || v == "1" || v == "on") return true;
  if (v == "false" || v == "0" || v == "off") return false;
  throw UsageError(flag + " takes true or false, not '" + v + "'");
}

long long ParseInt(const std::string& flag, const std::string& v, long long lo, long long hi) {
  try {
    size_t pos = 0;
    long long n = std::stoll(v, &pos);
    if (pos == v.size() && n >= lo && n <= hi) return n;
  } catch (const std::exception&) {
  }
  throw UsageError(flag + " takes an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], not '" + v + "'");
}

// An optional boolean: "--flag" alone is true, "--flag=false" sets it.
bool BoolFlag(ArgReader& args, const std::string& flag, bool* out) {
  if (args.Switch(flag)) {
    *out = true;
    return true;
  }
  if (!args.Done() && args.Peek().rfind(flag + "=", 0) == 0) {
    *out = ParseBool(flag, args.Next().substr(flag.size() + 1));
    return true;
  }
  return false;
}

}  // namespace

int ServeCommand(int argc, char** argv) {
  using namespace hetnet::serving;
  ServerOptions opts;
  HttpOptions http;
  GrpcOptions grpc;
  MetricsOptions metrics;
  bool allow_http = true, allow_grpc = true, allow_metrics = true;
  int exit_timeout_secs = 30;
  std::string v, auth_file;
  bool auth_open = false;
  ArgReader args(argc, argv, 1);
  while (!args.Done()) {
    if (args.Switch("--help") || args.Switch("-h")) {
      std::cout << kServeHelp;
      return kExitOk;
    }
    if (args.Flag("--model-repository", &v) || args.Flag("--model-store", &v)) {
      opts.model_repositories.push_back(v);
    } else if (args.Flag("--model-name", &v)) {
      opts.model_name = v;
    } else if (args.Flag("--model-control-mode", &v)) {
      if (v == "none") opts.control_mode = ModelControlMode::kNone;
      else if (v == "explicit") opts.control_mode = ModelControlMode::kExplicit;
      else if (v == "poll") opts.control_mode = ModelControlMode::kPoll;
      else throw UsageError("--model-control-mode takes none, explicit or poll, not '" + v + "'");
    } else if (args.Flag("--load-model", &v)) {
      opts.startup_models.push_back(v);
    } else if (args.Flag("--repository-poll-secs", &v)) {
      opts.repository_poll_secs = static_cast<int>(ParseInt("--repository-poll-secs", v, 1, 86400));
    } else if (BoolFlag(args, "--strict-readiness", &opts.strict_readiness)) {
    } else if (args.Flag("--exit-timeout-secs", &v)) {
      exit_timeout_secs = static_cast<int>(ParseInt("--exit-timeout-secs", v, 0, 86400));
    } else if (args.Flag("--log-verbose", &v)) {
      opts.log_verbose = static_cast<int>(ParseInt("--log-verbose", v, 0, 10));
    } else if (args.Flag("--http-address", &v)) {
      http.address = v;
    } else if (args.Flag("--http-port", &v)) {
      http.port = static_cast<int>(ParseInt("--http-port", v, 0, 65535));
    } else if (args.Flag("--grpc-address", &v)) {
      grpc.address = v;
    } else if (args.Flag("--grpc-port", &v)) {
      grpc.port = static_cast<int>(ParseInt("--grpc-port", v, 0, 65535));
    } else if (args.Flag("--metrics-address", &v)) {
      metrics.address = v;
    } else if (args.Flag("--metrics-port", &v)) {
      metrics.port = static_cast<int>(ParseInt("--metrics-port", v, 0, 65535));
    } else if (BoolFlag(args, "--allow-http", &allow_http) || BoolFlag(args, "--allow-grpc", &allow_grpc) ||
               BoolFlag(args, "--allow-metrics", &allow_metrics)) {
    } else if (args.Flag("--http-max-input-size", &v)) {
      http.max_input_size = static_cast<size_t>(ParseInt("--http-max-input-size", v, 1, 1LL << 40));
    } else if (args.Flag("--http-max-connections", &v)) {
      http.max_connections = static_cast<int>(ParseInt("--http-max-connections", v, 1, 1 << 20));
    } else if (args.Flag("--http-idle-timeout-secs", &v)) {
      http.idle_timeout_secs = static_cast<int>(ParseInt("--http-idle-timeout-secs", v, 1, 86400));
    } else if (args.Flag("--http-thread-count", &v)) {
      http.threads = static_cast<int>(ParseInt("--http-thread-count", v, 1, 256));
    } else if (args.Flag("--grpc-max-message-size", &v)) {
      grpc.max_message_size = static_cast<int>(ParseInt("--grpc-max-message-size", v, 1024, INT32_MAX));
    } else if (args.Flag("--queue-full-status", &v)) {
      http.queue_full_status = static_cast<int>(ParseInt("--queue-full-status", v, 429, 503));
      if (http.queue_full_status != 429 && http.queue_full_status != 503)
        throw UsageError("--queue-full-status takes 503 or 429");
    } else if (args.Flag("--auth-token-file", &v)) {
      auth_file = v;
    } else if (args.Switch("--auth-health-open")) {
      auth_open = true;
    } else if (args.Flag("--max-tensor-elements", &v)) {
      opts.max_tensor_elements = ParseInt("--max-tensor-elements", v, 1, 1LL << 40);
    } else if (args.Flag("--max-request-memory", &v)) {
      opts.max_request_memory = ParseInt("--max-request-memory", v, 0, INT64_MAX);
    } else if (args.Flag("--max-batch-size", &v)) {
      opts.max_batch_size = ParseInt("--max-batch-size", v, 1, 1 << 24);
    } else if (args.Switch("--allow-unsafe-ops")) {
      opts.allow_unsafe_ops = true;
    } else if (BoolFlag(args, "--allow-client-shm", &opts.allow_client_shm)) {
    } else if (PlacementSwitch(args)) {
    } else {
      throw UsageError("unknown option '" + args.Peek() + "'");
    }
  }
  if (opts.model_repositories.empty()) throw UsageError("--model-repository is required");
  opts.soft_placement = hetnet::DefaultPlacementOptions().soft_placement;
  if (!auth_file.empty()) http.auth_token = grpc.auth_token = ReadAuthToken(auth_file);
  http.auth_health_open = grpc.auth_health_open = auth_open;

  // Signals are taken by sigwait below; every thread started from here on inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  InferenceServer server(opts);
  std::unique_ptr<HttpFrontEnd> http_fe;
  std::unique_ptr<GrpcFrontEnd> grpc_fe;
  std::unique_ptr<MetricsFrontEnd> metrics_fe;
  // HTTP starts last: once /v2/health/live answers, the gRPC and metrics ports are bound too, so a
  // client (or a probe) that waited for HTTP never meets a refused connection on the others.
  if (allow_metrics) metrics_fe = std::make_unique<MetricsFrontEnd>(&server, metrics);
  if (allow_grpc) grpc_fe = std::make_unique<GrpcFrontEnd>(&server, grpc);
  if (allow_http) http_fe = std::make_unique<HttpFrontEnd>(&server, http);
  std::cerr << "hetnet serve: " << (http_fe ? "HTTP on " + http.address + ":" + std::to_string(http_fe->port()) : "")
            << (grpc_fe ? ", gRPC on " + grpc.address + ":" + std::to_string(grpc_fe->port()) : "")
            << (metrics_fe ? ", metrics on " + metrics.address + ":" + std::to_string(metrics_fe->port()) : "")
            << (server.IsReady() ? "; ready" : "; not ready (a model failed to load)") << std::endl;

  int sig = 0;
  sigwait(&stop_signals, &sig);
  std::cerr << "hetnet serve: signal " << sig << ": draining (at most " << exit_timeout_secs << " s)" << std::endl;
  server.StopAccepting();  // readiness false, new inferences 503 "Server is shutting down"
  const bool idle = server.WaitForIdle(std::chrono::seconds(exit_timeout_secs));
  if (!idle) std::cerr << "hetnet serve: " << server.InflightRequests() << " request(s) still running at exit timeout" << std::endl;
  if (grpc_fe) grpc_fe->Shutdown(std::chrono::milliseconds(idle ? 1000 : 0));
  if (http_fe) http_fe->Shutdown();
  if (metrics_fe) metrics_fe->Shutdown();
  std::cerr << "hetnet serve: stopped" << std::endl;
  return kExitOk;
}

}  // namespace hetnet_cli
