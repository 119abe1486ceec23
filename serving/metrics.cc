#include "serving/metrics.h"

#include <map>

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include "serving/request_memory.h"

namespace hetnet::serving {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

struct Families {
  std::vector<MetricFamily> list;
  std::map<std::string, size_t> index;
  MetricFamily& Get(const std::string& name, const std::string& help, MetricType type) {
    auto it = index.find(name);
    if (it != index.end()) return list[it->second];
    index[name] = list.size();
    list.push_back(MetricFamily{name, help, type, {}});
    return list.back();
  }
  void Add(const std::string& name, const std::string& help, MetricType type, std::vector<ClientMetric::Label> labels,
           double value) {
    ClientMetric m;
    m.label = std::move(labels);
    if (type == MetricType::Counter) {
      m.counter.value = value;
    } else {
      m.gauge.value = value;
    }
    Get(name, help, type).metric.push_back(std::move(m));
  }
};

}  // namespace

std::string RenderMetrics(const std::vector<std::shared_ptr<ModelVersion>>& versions,
                          const RequestMemoryBudget* request_memory) {
  Families f;
  const auto C = MetricType::Counter, G = MetricType::Gauge;
  if (request_memory) {
    f.Add("hetnet_request_memory_bytes", "Bytes held by requests in flight (bodies, parse state, gRPC messages)", G, {},
          static_cast<double>(request_memory->held()));
    f.Add("hetnet_request_memory_limit_bytes", "The server's limit on request memory (--max-request-memory; 0 = none)",
          G, {}, static_cast<double>(request_memory->limit()));
    f.Add("hetnet_request_memory_refusals_total", "Requests answered 503 / UNAVAILABLE for want of request memory", C,
          {}, static_cast<double>(request_memory->refusals()));
  }
  for (const auto& mv : versions) {
    const ModelStats& s = mv->stats();
    std::vector<ClientMetric::Label> labels = {{"model", mv->name()}, {"version", std::to_string(mv->version())}};
    for (const auto& [k, v] : mv->config().metric_tags()) labels.push_back({"_" + k, v});
    auto with = [&](std::vector<ClientMetric::Label> extra) {
      auto l = labels;
      l.insert(l.end(), extra.begin(), extra.end());
      return l;
    };
    const double us = 1e-3;
    f.Add("nv_inference_request_success", "Number of successful inference requests, all batch sizes", C, labels,
          s.success.count.load());
    f.Add("nv_inference_request_failure", "Number of failed inference requests, all batch sizes", C,
          with({{"reason", "REJECTED"}}), s.failures_rejected.load());
    f.Add("nv_inference_request_failure", "", C, with({{"reason", "BACKEND"}}), s.failures_backend.load());
    f.Add("nv_inference_request_failure", "", C, with({{"reason", "OTHER"}}), s.failures_other.load());
    f.Add("nv_inference_request_failure", "", C, with({{"reason", "CANCELED"}}), 0);
    f.Add("nv_inference_count", "Number of inferences performed (does not include cached requests)", C, labels,
          s.inference_count.load());
    f.Add("nv_inference_exec_count", "Number of model executions performed (does not include cached requests)", C,
          labels, s.execution_count.load());
    f.Add("nv_inference_pending_request_count", "Instantaneous number of pending requests awaiting execution", G,
          labels, static_cast<double>(s.pending.load()));
    f.Add("nv_inference_request_duration_us", "Cumulative inference request duration in microseconds", C, labels,
          (s.success.ns.load() + s.fail.ns.load()) * us);
    f.Add("nv_inference_queue_duration_us", "Cumulative inference queuing duration in microseconds", C, labels,
          s.queue.ns.load() * us);
    f.Add("nv_inference_compute_input_duration_us", "Cumulative compute input duration in microseconds", C, labels,
          s.compute_input.ns.load() * us);
    f.Add("nv_inference_compute_infer_duration_us", "Cumulative compute inference duration in microseconds", C, labels,
          s.compute_infer.ns.load() * us);
    f.Add("nv_inference_compute_output_duration_us", "Cumulative inference compute output duration in microseconds",
          C, labels, s.compute_output.ns.load() * us);
    // hetnet's own families.
    for (const auto& [pair, t] : s.Copies()) {
      auto l = with({{"src", pair.first}, {"dst", pair.second}});
      f.Add("hetnet_copy_bytes_total", "Bytes the runtime's inserted copies moved between devices", C, l, t.bytes);
      f.Add("hetnet_copy_count_total", "Inserted cross-device copies executed", C, l, t.count);
      f.Add("hetnet_copy_duration_us", "Cumulative time of the inserted copies in microseconds (stream time for GPU copies)",
            C, l, t.ns * us);
    }
    for (const auto& [device, n] : mv->OpsPerDevice())
      f.Add("hetnet_model_ops", "Operators placed on each device (all instances of the version)", G,
            with({{"device", device}}), n);
    for (const auto& [size, b] : s.Batches())
      f.Add("hetnet_batch_size_executions_total", "Model executions by batch size", C,
            with({{"batch_size", std::to_string(size)}}), b.count);
    f.Add("hetnet_queue_depth", "Requests waiting in the model's queue", G, labels,
          static_cast<double>(mv->queue_depth()));
    f.Add("hetnet_input_bytes_copied_total", "Request bytes copied into the instances' input tensors", C, labels,
          s.input_bytes_copied.load());
  }
  return prometheus::TextSerializer().Serialize(f.list);
}

}  // namespace hetnet::serving
