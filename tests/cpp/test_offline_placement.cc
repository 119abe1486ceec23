// Offline placement planning (issue 13 item 7): `hetnet inspect --placement --devices LIST` and
// hetnet::PlanPlacement plan a net for a machine with the listed devices, on any machine (no GPU
// needed, nothing run). The nets are python/examples/mixed_devices_run.py's, built field by field.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <tuple>

#include "core/device.h"
#include "core/error.h"
#include "core/placement.h"
#include "core/proto_io.h"
#include "test_util_io.h"

using namespace hetnet;
using namespace hetnet_test;

namespace {

void SetDevice(caffe2::OperatorDef* op, int type, int id) {
  op->mutable_device_option()->set_device_type(type);
  op->mutable_device_option()->set_device_id(id);
}

caffe2::OperatorDef* AddOp(caffe2::NetDef* net, const std::string& type, std::vector<std::string> in,
                           std::vector<std::string> out) {
  auto* op = net->add_op();
  op->set_type(type);
  for (const auto& i : in) op->add_input(i);
  for (const auto& o : out) op->add_output(o);
  return op;
}

// mixed_devices_run.py: FC on CPU (device_id -1 as the example writes it), Sigmoid and
// SoftmaxWithLoss on cuda:0.
caffe2::NetDef MixedPredict() {
  caffe2::NetDef net;
  net.set_name("mixed devices run");
  for (const char* in : {"data", "fc_w", "fc_b", "label"}) net.add_external_input(in);
  SetDevice(AddOp(&net, "FC", {"data", "fc_w", "fc_b"}, {"fc1"}), 0, -1);
  SetDevice(AddOp(&net, "Sigmoid", {"fc1"}, {"pred"}), 1, 0);
  SetDevice(AddOp(&net, "SoftmaxWithLoss", {"pred", "label"}, {"softmax", "loss"}), 1, 0);
  return net;
}

caffe2::NetDef MixedInit() {
  caffe2::NetDef net;
  net.set_name("mixed devices run_init");
  auto* w = AddOp(&net, "XavierFill", {}, {"fc_w"});
  auto* shape = w->add_arg();
  shape->set_name("shape");
  shape->add_ints(10);
  shape->add_ints(100);
  SetDevice(w, 0, -1);
  auto* b = AddOp(&net, "ConstantFill", {}, {"fc_b"});
  shape = b->add_arg();
  shape->set_name("shape");
  shape->add_ints(10);
  SetDevice(b, 0, -1);
  return net;
}

// x (CPU) -> FC on cuda:0 -> Relu on cuda:1 -> Sigmoid on CPU: a copy of each kind.
caffe2::NetDef TwoGpuNet() {
  caffe2::NetDef net;
  net.set_name("two_gpus");
  for (const char* in : {"x", "w", "b"}) net.add_external_input(in);
  net.add_external_output("z");
  SetDevice(AddOp(&net, "FC", {"x", "w", "b"}, {"y"}), 1, 0);
  SetDevice(AddOp(&net, "Relu", {"y"}, {"r"}), 1, 1);
  AddOp(&net, "Sigmoid", {"r"}, {"z"});
  return net;
}

CommandResult Hetnet(const TempDir& dir, const std::string& args) {
  return RunCommand(std::string("'") + HETNET_CLI_PATH + "' " + args, dir);
}

// The report's operator lines ("  #3   Sigmoid   cuda:0   engine=... reason") as (index, type,
// device), and its copy lines ("  #1   CopyCPUToGPU  fc1 -> fc1_gpu_0  cpu -> cuda:0  640 B") as
// (index, type, src, dst, from, to, bytes text).
using OpLine = std::tuple<int, std::string, std::string>;
using CopyLine = std::tuple<int, std::string, std::string, std::string, std::string, std::string, std::string>;

void ParseReport(const std::string& text, std::vector<OpLine>* ops, std::vector<CopyLine>* copies) {
  std::istringstream in(text);
  bool in_copies = false, in_report = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Placement of net", 0) == 0) in_report = true;
    if (line.rfind("Copies (per run):", 0) == 0) in_copies = true;
    if (line.rfind("Totals per device boundary", 0) == 0) in_copies = false;
    if (!in_report || line.rfind("  #", 0) != 0) continue;
    std::istringstream l(line.substr(3));
    int index = -1;
    std::string type, a, arrow, b, from, arrow2, to, n, unit;
    if (in_copies) {
      l >> index >> type >> a >> arrow >> b >> from >> arrow2 >> to >> n >> unit;
      copies->emplace_back(index, type, a, b, from, to, unit.empty() ? n : n + " " + unit);
    } else {
      l >> index >> type >> a;
      ops->emplace_back(index, type, a);
    }
  }
}

}  // namespace

TEST_CASE("offline placement: PlanPlacement of the mixed-device example for cpu,cuda:0", "[placement][offline]") {
  // Inputs as the init net leaves them on that machine, data/label shapes as the example feeds.
  const CopyPassResult init = PlanPlacement(MixedInit(), {"cpu", "cuda:0"}, {}, {}, PlacementOptions{});
  REQUIRE(init.blob_shapes.count("fc_w"));
  CHECK(init.blob_shapes.at("fc_w").dims == std::vector<int64_t>{10, 100});
  CHECK(init.blob_devices.at("fc_b") == Device::CPU());
  std::map<std::string, Device> devices = {{"fc_w", init.blob_devices.at("fc_w")},
                                           {"fc_b", init.blob_devices.at("fc_b")}};
  std::map<std::string, TensorInfo> shapes = {{"fc_w", init.blob_shapes.at("fc_w")},
                                              {"fc_b", init.blob_shapes.at("fc_b")},
                                              {"data", TensorInfo::Of({16, 100}, DataType::Float)},
                                              {"label", TensorInfo::Of({16}, DataType::Int32)}};
  const CopyPassResult r = PlanPlacement(MixedPredict(), {"cpu", "cuda:0"}, devices, shapes, PlacementOptions{});
  const auto& ops = r.report.ops;
  REQUIRE(ops.size() == 5);
  const std::vector<std::pair<std::string, Device>> want = {{"FC", Device::CPU()},
                                                            {"CopyCPUToGPU", Device::CUDA(0)},
                                                            {"Sigmoid", Device::CUDA(0)},
                                                            {"CopyCPUToGPU", Device::CUDA(0)},
                                                            {"SoftmaxWithLoss", Device::CUDA(0)}};
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("op #" << i);
    CHECK(ops[i].type == want[i].first);
    CHECK(ops[i].device == want[i].second);
  }
  CHECK(ops[2].reason == "own device option");  // not moved: the planned machine has cuda:0
  REQUIRE(r.report.copies.size() == 2);
  CHECK(r.report.copies[0].src_blob == "fc1");
  CHECK(r.report.copies[0].dst_blob == "fc1_gpu_0");
  CHECK(r.report.copies[0].bytes == 16 * 10 * 4);
  CHECK(r.report.copies[1].src_blob == "label");
  CHECK(r.report.copies[1].dst_blob == "label_gpu_0");
  CHECK(r.report.copies[1].bytes == 16 * 4);
  // The rewritten net reads the copies.
  CHECK(r.net.op(2).input(0) == "fc1_gpu_0");
  CHECK(r.net.op(4).input(1) == "label_gpu_0");
}

TEST_CASE("offline placement: device lists are validated", "[placement][offline]") {
  const PlacementOptions opts;
  const caffe2::NetDef net = MixedPredict();
  CHECK(PlannedGpuCount({"cpu"}) == 0);
  CHECK(PlannedGpuCount({"cpu", "cuda:0", "cuda:1"}) == 2);
  CHECK(PlannedGpuCount({"cuda:1", "cuda:0"}) == 2);  // order does not matter; the CPU is implied
  CHECK_THROWS_WITH(PlannedGpuCount({"cpu", "gpu:0"}), Catch::Contains("unknown device 'gpu:0'"));
  CHECK_THROWS_WITH(PlannedGpuCount({"cpu", "cuda:x"}), Catch::Contains("unknown device 'cuda:x'"));
  CHECK_THROWS_WITH(PlannedGpuCount({"cpu", "cuda:-1"}), Catch::Contains("unknown device 'cuda:-1'"));
  CHECK_THROWS_WITH(PlannedGpuCount({"cpu", "cuda:0", "cuda:0"}), Catch::Contains("'cuda:0' is listed twice"));
  CHECK_THROWS_WITH(PlannedGpuCount({"cpu", "cuda:1"}), Catch::Contains("has cuda:1 but not cuda:0"));
  CHECK_THROWS_WITH(PlannedGpuCount({}), Catch::Contains("empty"));
  CHECK_THROWS_WITH(PlannedGpuCount({"cpu", ""}), Catch::Contains("empty device name"));
  try {
    PlanPlacement(net, {"cpu", "cuda:x"}, {}, {}, opts);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kInvalidArgument);
  }
  // An op on a GPU the list lacks: the real machine's error, naming the ops, and the planned devices.
  try {
    PlanPlacement(net, {"cpu"}, {}, {}, opts);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kUnsupported);
    CHECK_THAT(e.what(), Catch::Contains("#1 Sigmoid on cuda:0") && Catch::Contains("#2 SoftmaxWithLoss on cuda:0") &&
                             Catch::Contains("soft_placement") && Catch::Contains("machine with cpu;"));
  }
  try {
    PlanPlacement(TwoGpuNet(), {"cpu", "cuda:0"}, {}, {}, opts);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("#1 Relu on cuda:1") && Catch::Contains("machine with cpu, cuda:0;"));
    CHECK_THAT(e.what(), !Catch::Contains("FC on cuda:0"));
  }
  // Soft placement maps them to the CPU, as it would on that machine.
  PlacementOptions soft;
  soft.soft_placement = true;
  const CopyPassResult r = PlanPlacement(net, {"cpu"}, {}, {}, soft);
  REQUIRE(r.report.ops.size() == 3);
  CHECK(r.report.copies.empty());
  for (int i : {1, 2}) {
    CHECK(r.report.ops[i].device == Device::CPU());
    CHECK(r.report.ops[i].reason == "soft placement (cuda:0 not available)");
  }
}

TEST_CASE("offline placement: two GPUs get GPU-to-GPU copies", "[placement][offline]") {
  std::map<std::string, TensorInfo> shapes = {{"x", TensorInfo::Of({8, 32}, DataType::Float)},
                                              {"w", TensorInfo::Of({4, 32}, DataType::Float)},
                                              {"b", TensorInfo::Of({4}, DataType::Float)}};
  const CopyPassResult r = PlanPlacement(TwoGpuNet(), {"cpu", "cuda:0", "cuda:1"}, {}, shapes, PlacementOptions{});
  std::vector<std::tuple<std::string, std::string, std::string, Device, Device, int64_t>> got;
  for (const auto& c : r.report.copies) got.emplace_back(c.type, c.src_blob, c.dst_blob, c.from, c.to, c.bytes);
  const decltype(got) want = {
      {"CopyCPUToGPU", "x", "x_gpu_0", Device::CPU(), Device::CUDA(0), 8 * 32 * 4},
      {"CopyCPUToGPU", "w", "w_gpu_0", Device::CPU(), Device::CUDA(0), 4 * 32 * 4},
      {"CopyCPUToGPU", "b", "b_gpu_0", Device::CPU(), Device::CUDA(0), 4 * 4},
      {"Copy", "y", "y_gpu_1", Device::CUDA(0), Device::CUDA(1), 8 * 4 * 4},
      {"CopyGPUToCPU", "r", "r_cpu", Device::CUDA(1), Device::CPU(), 8 * 4 * 4},
  };
  CHECK(got == want);
}

TEST_CASE("cli: inspect --placement --devices plans the mixed-device example offline", "[io][cli][placement][offline]") {
  TempDir dir;
  const std::string predict = dir.File("predict.pb"), init = dir.File("init.pb");
  WriteProtoToFile(predict, MixedPredict());
  WriteProtoToFile(init, MixedInit());
  // The same on any machine, with or without a GPU: nothing runs.
  CommandResult r = Hetnet(dir, "inspect --placement --devices cpu,cuda:0 --init " + init +
                                    " --shape data=16,100 --shape label=16:int32 " + predict);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("Offline plan for a machine with cpu, cuda:0 (nothing was run)"));
  std::vector<OpLine> ops;
  std::vector<CopyLine> copies;
  ParseReport(r.out, &ops, &copies);
  const std::vector<OpLine> want_ops = {{0, "FC", "cpu"},
                                        {1, "CopyCPUToGPU", "cuda:0"},
                                        {2, "Sigmoid", "cuda:0"},
                                        {3, "CopyCPUToGPU", "cuda:0"},
                                        {4, "SoftmaxWithLoss", "cuda:0"}};
  CHECK(ops == want_ops);
  const std::vector<CopyLine> want_copies = {{1, "CopyCPUToGPU", "fc1", "fc1_gpu_0", "cpu", "cuda:0", "640 B"},
                                             {3, "CopyCPUToGPU", "label", "label_gpu_0", "cpu", "cuda:0", "64 B"}};
  CHECK(copies == want_copies);
  CHECK_THAT(r.out, Catch::Contains("cpu -> cuda:0: 2 copies, 704 B"));

  // Without shapes the copies are still listed, their size unknown; --devices implies --placement.
  r = Hetnet(dir, "inspect --devices cpu,cuda:0 " + predict);
  REQUIRE(r.exit_code == 0);
  ops.clear();
  copies.clear();
  ParseReport(r.out, &ops, &copies);
  CHECK(ops == want_ops);
  REQUIRE(copies.size() == 2);
  CHECK(std::get<6>(copies[0]) == "unknown");
  CHECK(std::get<2>(copies[1]) == "label");

  // --dot draws the planned net: the copies as red edges with their bytes.
  r = Hetnet(dir, "inspect --dot --devices cpu,cuda:0 --init " + init + " --shape data=16,100 " + predict);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("digraph") && Catch::Contains("640 B") && Catch::Contains("red"));
}

TEST_CASE("cli: inspect --devices cpu refuses GPU ops or maps them with --soft-placement", "[io][cli][placement][offline]") {
  TempDir dir;
  const std::string predict = dir.File("predict.pb");
  WriteProtoToFile(predict, MixedPredict());
  CommandResult r = Hetnet(dir, "inspect --placement --devices cpu " + predict);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("#1 Sigmoid on cuda:0") && Catch::Contains("#2 SoftmaxWithLoss on cuda:0") &&
                        Catch::Contains("planned offline for a machine with cpu;"));
  r = Hetnet(dir, "inspect --placement --soft-placement --devices cpu " + predict);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::vector<OpLine> ops;
  std::vector<CopyLine> copies;
  ParseReport(r.out, &ops, &copies);
  const std::vector<OpLine> want = {{0, "FC", "cpu"}, {1, "Sigmoid", "cpu"}, {2, "SoftmaxWithLoss", "cpu"}};
  CHECK(ops == want);
  CHECK(copies.empty());
  CHECK_THAT(r.out, Catch::Contains("soft placement (cuda:0 not available)") && Catch::Contains("0 inserted copies"));

  // Two GPUs planned; an op on cuda:1 with only cuda:0 listed is refused by name.
  const std::string two = dir.File("two.pb");
  WriteProtoToFile(two, TwoGpuNet());
  r = Hetnet(dir, "inspect --devices cpu,cuda:0,cuda:1 --shape x=8,32 --shape w=4,32 --shape b=4 " + two);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  ops.clear();
  copies.clear();
  ParseReport(r.out, &ops, &copies);
  CHECK(std::count(copies.begin(), copies.end(),
                   CopyLine{4, "Copy", "y", "y_gpu_1", "cuda:0", "cuda:1", "128 B"}) == 1);
  CHECK(std::count(copies.begin(), copies.end(),
                   CopyLine{6, "CopyGPUToCPU", "r", "r_cpu", "cuda:1", "cpu", "128 B"}) == 1);
  r = Hetnet(dir, "inspect --devices cpu,cuda:0 " + two);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("#1 Relu on cuda:1"));
}

TEST_CASE("cli: inspect --devices rejects bad device lists as usage errors", "[io][cli][placement][offline]") {
  TempDir dir;
  const std::string predict = dir.File("predict.pb");
  WriteProtoToFile(predict, MixedPredict());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"cpu,gpu:0", "unknown device 'gpu:0'"},
      {"cpu,cuda:0,cuda:0", "device 'cuda:0' is listed twice"},
      {"cpu,cuda:1", "has cuda:1 but not cuda:0"},
      {"cpu,,cuda:0", "empty device name"},
      {"CUDA:0", "unknown device 'CUDA:0'"},
  };
  for (const auto& [list, message] : cases) {
    CommandResult r = Hetnet(dir, "inspect --placement --devices '" + list + "' " + predict);
    INFO(list << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--devices '" + list + "'") && Catch::Contains(message));
    CHECK_THAT(r.out, !Catch::Contains("Placement of net"));
  }
  CommandResult r = Hetnet(dir, "inspect --devices cpu,cuda:0 --shape label=16:int31 " + predict);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("unknown element type 'int31'"));
  r = Hetnet(dir, "inspect --help");
  CHECK_THAT(r.out, Catch::Contains("--devices LIST"));
}
