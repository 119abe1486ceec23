// Page-locked memory for CPU tensors that GPU copies read (Tensor::set_pinned_host): a hint that
// never changes what a tensor holds, and that turns itself off where no page-locked memory exists.
#include <catch2/catch.hpp>

#include "core/net.h"
#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

TEST_CASE("a CPU tensor asking for page-locked memory keeps its contents; without a GPU it stops asking",
          "[tensor][pinned]") {
  Tensor t({4}, DataType::Float);
  float* p = t.mutable_data<float>();
  for (int i = 0; i < 4; ++i) p[i] = static_cast<float>(i + 1);
  t.set_pinned_host(true);
  // An in-place writer asks for its memory again and reads what it overwrites.
  const float* q = t.mutable_data<float>();
  CHECK(std::vector<float>(q, q + 4) == std::vector<float>{1, 2, 3, 4});
  if (NumCudaDevices() == 0) {
    CHECK_FALSE(t.storage_pinned());
    CHECK_FALSE(t.pinned_host());  // the failed attempt is not repeated at every write
  } else {
    CHECK(t.storage_pinned());
  }
  // Views never ask: moving their storage would split them from what they view.
  Tensor owner({2}, DataType::Float);
  owner.set_pinned_host(true);
  Tensor view;
  view.ShareData(owner);
  CHECK_FALSE(view.pinned_host());
  CHECK_FALSE(owner.View({1, 2}).pinned_host());
  // An owner whose storage a view shares keeps it (and the view keeps seeing its writes).
  owner.mutable_data<float>()[0] = 5.f;
  CHECK(view.data<float>()[0] == 5.f);
  // Strings never ask.
  Tensor s({2}, DataType::String);
  s.set_pinned_host(true);
  s.mutable_data<std::string>()[0] = "a";
  CHECK_FALSE(s.storage_pinned());
}

TEST_CASE("GPU: a blob that a host-to-device copy reads moves to page-locked memory at its next write",
          "[gpu][pinned]") {
  if (SkipWithoutGpu()) return;
  Workspace ws;
  Feed<float>(ws, "x", {3}, {1, 2, 3});
  caffe2::NetDef net;
  net.set_name("pinned_source");
  net.add_external_input("x");
  *net.add_op() = MakeOp("Scale", {"x"}, {"x"}, {ArgF("scale", 2.f)});             // CPU, in place
  *net.add_op() = MakeOp("Relu", {"x"}, {"y"}, {}, Device::CUDA(0));               // reads x on the GPU
  *net.add_op() = MakeOp("Scale", {"x"}, {"x"}, {ArgF("scale", 10.f)});            // CPU rewrites x after the copy
  NetBase* n = ws.CreateNet(net);
  n->Run();  // the copy reads pageable x (staged) and marks it; the last Scale's write moves it
  CHECK(ws.GetBlob("x")->GetTensor().storage_pinned());
  CHECK(FetchVec<float>(ws, "y") == std::vector<float>{2, 4, 6});
  CHECK(FetchVec<float>(ws, "x") == std::vector<float>{20, 40, 60});
  n->Run();  // now one DMA from page-locked x; the writes after it wait for it (simple net)
  CHECK(ws.GetBlob("x")->GetTensor().storage_pinned());
  CHECK(FetchVec<float>(ws, "y") == std::vector<float>{40, 80, 120});
  CHECK(FetchVec<float>(ws, "x") == std::vector<float>{400, 800, 1200});
}
