// The gRPC ModelInfer route without a server: the message bytes parsed as grpc++ does, converted by
// the front end's ToInferRequest (typed contents to wire bytes, raw_input_contents), then
// ValidateRequest + BuildInputs against a served model's config. The model is picked by the
// message's model_name ("dyn", "strs", else "simple").
#include "fuzz/fuzz_common.h"
#include "fuzz/serving_fixture.h"
#include "serving/grpc_server.h"
#include "serving/proto/grpc_service.pb.h"

static void Run(const uint8_t* data, size_t size) {
  auto& fx = hetnet_fuzz::Fixture();
  auto message = std::make_shared<inference::ModelInferRequest>();
  if (!message->ParseFromArray(data, static_cast<int>(size))) return;
  const int model = message->model_name() == "dyn" ? 1 : message->model_name() == "strs" ? 2 : 0;
  auto request = hetnet::serving::grpc_detail::ToInferRequest(std::move(message));
  fx.ValidateAndBuild(model, std::move(request));
}

HETNET_FUZZ_ENTRY(Run)
