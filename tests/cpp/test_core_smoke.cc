#include <catch2/catch.hpp>

#include "core/net.h"
#include "core/workspace.h"

using namespace hetnet;

TEST_CASE("Relu runs through a simple net on CPU", "[core]") {
  Workspace ws;
  Tensor* x = ws.CreateBlob("x")->GetMutableTensor(Device::CPU());
  x->Resize({4});
  float* p = x->mutable_data<float>();
  p[0] = -1; p[1] = 2; p[2] = -3; p[3] = 4;
  caffe2::NetDef net;
  net.set_name("smoke");
  net.add_external_input("x");
  auto* op = net.add_op();
  op->set_type("Relu");
  op->add_input("x");
  op->add_output("y");
  ws.RunNetOnce(net);
  const Tensor& y = ws.GetBlobOrThrow("y").GetTensor();
  REQUIRE(y.shape() == std::vector<int64_t>{4});
  CHECK(y.data<float>()[0] == 0.f);
  CHECK(y.data<float>()[3] == 4.f);
}
