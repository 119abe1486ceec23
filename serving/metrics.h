// Prometheus text for the metrics endpoint, built at scrape time from the models' statistics with
// prometheus-cpp's data model and text serializer: Triton's nv_inference_* families with their
// names and labels (model, version, _<tag>, reason) plus hetnet's own (copies per device pair,
// ops per device, batch sizes, queue depth, bytes copied from requests).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "serving/model_version.h"

namespace hetnet::serving {

class RequestMemoryBudget;

// `request_memory` (may be null) adds the hetnet_request_memory_* families.
std::string RenderMetrics(const std::vector<std::shared_ptr<ModelVersion>>& versions,
                          const RequestMemoryBudget* request_memory = nullptr);

}  // namespace hetnet::serving
