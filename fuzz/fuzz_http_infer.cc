// The HTTP infer route's decoding: DecodeInferRequest on a body and an optional
// Inference-Header-Content-Length header (JSON, binary, mixed and raw bodies), then what the
// server does before running: ValidateRequest against the model's config and BuildInputs.
// Input layout: byte 0 = flags (bits 0-1: model simple/dyn/strs/simple; bit 2: the header is sent),
// then, when the header is sent, its value up to the first '\n' (at most 32 bytes); the rest is the body.
#include <cstring>

#include "fuzz/fuzz_common.h"
#include "fuzz/serving_fixture.h"
#include "serving/http_infer_codec.h"

static void Run(const uint8_t* data, size_t size) {
  if (size < 1) return;
  auto& fx = hetnet_fuzz::Fixture();
  const int model = (data[0] & 3) % 3;
  const bool has_header = data[0] & 4;
  size_t pos = 1;
  std::string header;
  if (has_header) {
    const void* nl = std::memchr(data + 1, '\n', std::min<size_t>(size - 1, 33));
    if (!nl) return;
    const size_t end = static_cast<const uint8_t*>(nl) - data;
    header.assign(reinterpret_cast<const char*>(data + 1), end - 1);
    pos = end + 1;
  }
  auto body = std::make_shared<std::string>(reinterpret_cast<const char*>(data + pos), size - pos);
  hetnet::serving::DecodedInfer decoded = hetnet::serving::DecodeInferRequest(
      fx.server.get(), hetnet_fuzz::ServingFixture::kModels[model], "", body, has_header ? &header : nullptr);
  fx.ValidateAndBuild(model, std::move(decoded.request));
}

HETNET_FUZZ_ENTRY(Run)
