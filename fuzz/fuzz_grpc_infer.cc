// The gRPC ModelInfer route without a server: the message bytes parsed as grpc++ does, converted by
// the front end's ToInferRequest (typed contents to wire bytes, raw_input_contents), then
// ValidateRequest + BuildInputs against a served model's config. The model is picked by the
// message's model_name ("dyn", "strs", else "simple"). Before that, the bound of the parse that the
// front end charges first (core/proto_parse_bound.h) must hold what the parse really took.
#include <cstdio>
#include <cstdlib>

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "fuzz/fuzz_common.h"
#include "fuzz/serving_fixture.h"
#include "serving/grpc_server.h"
#include "serving/proto/grpc_service.pb.h"
#include "core/proto_parse_bound.h"

static void Run(const uint8_t* data, size_t size) {
  auto& fx = hetnet_fuzz::Fixture();
  auto message = std::make_shared<inference::ModelInferRequest>();
  google::protobuf::io::ArrayInputStream wire(data, static_cast<int>(size), 64);
  const auto bound = hetnet::BoundParsedSize(inference::ModelInferRequest::descriptor(), &wire, size);
  if (!message->ParseFromArray(data, static_cast<int>(size))) return;
  // The front end refuses what the bound refuses; what it admits must not take more than charged.
  if (!bound.ok) return;
  if (bound.bytes < message->SpaceUsedLong()) {
    std::fprintf(stderr, "parse bound %llu < %llu bytes used\n", static_cast<unsigned long long>(bound.bytes),
                 static_cast<unsigned long long>(message->SpaceUsedLong()));
    std::abort();
  }
  const int model = message->model_name() == "dyn" ? 1 : message->model_name() == "strs" ? 2 : 0;
  auto request = hetnet::serving::grpc_detail::ToInferRequest(std::move(message));
  fx.ValidateAndBuild(model, std::move(request));
}

HETNET_FUZZ_ENTRY(Run)
