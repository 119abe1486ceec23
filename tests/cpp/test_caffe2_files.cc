// Real Caffe2 files (issue 13): a model-zoo-style init net that also fills `data` with a placeholder
// and a SqueezeNet-shaped predict net written field by field as Caffe2's translator writes it
// (caffe_translator.py: Conv/MaxPool with stride, pad, kernel; in-place Relu; Concat with its
// `_<name>_dims` second output and order; AveragePool with global_pooling 1 and the defaults
// kernel 0, stride 1, pad 0 spelled out; legacy_pad 3), through the C++ Predictor and `hetnet run`.
// Also the pooling argument forms that global pooling accepts and refuses.
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <functional>
#include <thread>

#include "core/npy.h"
#include "core/op_schema.h"
#include "core/predictor.h"
#include "core/proto_io.h"
#include "core/workspace.h"
#include "test_util_io.h"

using namespace hetnet;
using namespace hetnet_test;

namespace {

caffe2::Argument* IntArg(caffe2::OperatorDef* op, const std::string& name, int64_t v) {
  auto* a = op->add_arg();
  a->set_name(name);
  a->set_i(v);
  return a;
}
caffe2::Argument* IntsArg(caffe2::OperatorDef* op, const std::string& name, std::vector<int64_t> v) {
  auto* a = op->add_arg();
  a->set_name(name);
  for (auto x : v) a->add_ints(x);
  return a;
}
void StrArg(caffe2::OperatorDef* op, const std::string& name, const std::string& v) {
  auto* a = op->add_arg();
  a->set_name(name);
  a->set_s(v);
}

// Deterministic, varied values.
std::vector<float> Pattern(size_t n, int seed, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (static_cast<float>((i * 7 + seed * 13) % 17) - 8.f) * scale;
  return v;
}
size_t Numel(const std::vector<int64_t>& s) {
  size_t n = 1;
  for (auto d : s) n *= static_cast<size_t>(d);
  return n;
}

const std::vector<int64_t> kPlaceholderShape = {1, 3, 9, 9};

// The translator's Conv: inputs X, <out>_w, <out>_b; args stride, pad, kernel (in that order).
void TranslatorConv(caffe2::NetDef* init, caffe2::NetDef* predict, const std::string& in, const std::string& out,
                    int cin, int cout, int kernel, int stride, int pad, int seed) {
  auto* op = predict->add_op();
  op->add_input(in);
  op->add_input(out + "_w");
  op->add_input(out + "_b");
  op->add_output(out);
  op->set_name("");
  op->set_type("Conv");
  IntArg(op, "stride", stride);
  IntArg(op, "pad", pad);
  IntArg(op, "kernel", kernel);
  predict->add_external_input(out + "_w");
  predict->add_external_input(out + "_b");
  const std::vector<int64_t> wshape = {cout, cin, kernel, kernel};
  AddFill(init, out + "_w", wshape, Pattern(Numel(wshape), seed, 0.05f));
  AddFill(init, out + "_b", {cout}, Pattern(cout, seed + 1, 0.02f));
}
void TranslatorRelu(caffe2::NetDef* predict, const std::string& blob) {
  auto* op = predict->add_op();
  op->add_input(blob);
  op->add_output(blob);  // in place, as Caffe's ReLU layers are
  op->set_name("");
  op->set_type("Relu");
}

// init: GivenTensorFill for `data` (the zoo's placeholder) and every weight. predict: conv1 -> relu
// -> pool1 (MaxPool 3/2, legacy_pad 3) -> fire2 (squeeze 1x1, expand 1x1 and 3x3, Concat) -> conv10
// -> relu -> pool10 (global AveragePool) -> softmaxout.
void MakeZooSqueezeNet(caffe2::NetDef* init, caffe2::NetDef* predict) {
  init->set_name("squeezenet_init");
  predict->set_name("squeezenet");
  AddFill(init, "data", kPlaceholderShape, Pattern(Numel(kPlaceholderShape), 99, 0.1f));
  predict->add_external_input("data");
  TranslatorConv(init, predict, "data", "conv1", 3, 4, 3, 2, 0, 1);
  TranslatorRelu(predict, "conv1");
  {
    auto* op = predict->add_op();
    op->add_input("conv1");
    op->add_output("pool1");
    op->set_name("");
    op->set_type("MaxPool");
    IntArg(op, "stride", 2);
    IntArg(op, "pad", 0);
    IntArg(op, "kernel", 3);
    IntArg(op, "legacy_pad", 3);
  }
  TranslatorConv(init, predict, "pool1", "fire2/squeeze1x1", 4, 2, 1, 1, 0, 3);
  TranslatorRelu(predict, "fire2/squeeze1x1");
  TranslatorConv(init, predict, "fire2/squeeze1x1", "fire2/expand1x1", 2, 3, 1, 1, 0, 5);
  TranslatorRelu(predict, "fire2/expand1x1");
  TranslatorConv(init, predict, "fire2/squeeze1x1", "fire2/expand3x3", 2, 3, 3, 1, 1, 7);
  TranslatorRelu(predict, "fire2/expand3x3");
  {
    auto* op = predict->add_op();
    op->add_input("fire2/expand1x1");
    op->add_input("fire2/expand3x3");
    op->add_output("fire2/concat");
    op->add_output("_fire2/concat_dims");
    op->set_name("");
    op->set_type("Concat");
    StrArg(op, "order", "NCHW");
  }
  TranslatorConv(init, predict, "fire2/concat", "conv10", 6, 5, 1, 1, 0, 9);
  TranslatorRelu(predict, "conv10");
  {
    auto* op = predict->add_op();
    op->add_input("conv10");
    op->add_output("pool10");
    op->set_name("");
    op->set_type("AveragePool");
    IntArg(op, "stride", 1);
    IntArg(op, "pad", 0);
    IntArg(op, "kernel", 0);
    IntArg(op, "global_pooling", 1);
    IntArg(op, "legacy_pad", 3);
  }
  {
    auto* op = predict->add_op();
    op->add_input("pool10");
    op->add_output("softmaxout");
    op->set_name("");
    op->set_type("Softmax");
  }
  predict->add_external_output("softmaxout");
}

// The same nets run in a plain Workspace: init, then blobs overwritten, then predict.
std::vector<float> PlainRun(const caffe2::NetDef& init, const caffe2::NetDef& predict,
                            const std::map<std::string, Tensor>& overrides, std::vector<int64_t>* shape = nullptr) {
  Workspace ws;
  ws.RunNetOnce(init);
  for (const auto& [name, t] : overrides) *ws.CreateBlob(name)->GetMutable<Tensor>() = t.To(t.device());
  ws.RunNetOnce(predict);
  const Tensor& out = ws.GetBlobOrThrow("softmaxout").GetTensor();
  if (shape) *shape = out.shape();
  return Values(out);
}

// A Predictor (or `hetnet run`) runs the net rewritten for inference (channels-last on the DNNL
// engine), a plain workspace the net as written: oneDNN may pick other kernels for the two layouts
// (on AVX2 CPUs they round differently in the last bits), so their outputs agree to float32's
// rounding, not bit for bit. Softmax outputs here are about 0.2.
bool Near(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return false;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(got[i] - want[i]) <= 2e-6f)) return false;
  return true;
}

Tensor Image(std::vector<int64_t> shape, int seed) {
  return FloatTensor(shape, Pattern(Numel(shape), seed, 0.15f));
}

}  // namespace

TEST_CASE("caffe2 files: zoo init net filling data, SqueezeNet-shaped predict net, C++ Predictor",
          "[caffe2_files][predictor]") {
  TempDir dir;
  {
    caffe2::NetDef init, predict;
    MakeZooSqueezeNet(&init, &predict);
    WriteProtoToFile(dir.File("init_net.pb"), init);
    WriteProtoToFile(dir.File("predict_net.pb"), predict);
  }
  // Through the files, as a user has them.
  const caffe2::NetDef init = ReadNetDef(dir.File("init_net.pb"));
  const caffe2::NetDef predict = ReadNetDef(dir.File("predict_net.pb"));
  Predictor p(init, predict);
  CHECK(p.input_names().empty());
  REQUIRE(p.filled_input_names().size() == static_cast<size_t>(predict.external_input_size()));
  CHECK(p.filled_input_names().front() == "data");
  CHECK(p.positional_input_names() == p.filled_input_names());

  const Tensor x = Image(kPlaceholderShape, 1);
  const std::vector<float> want_x = PlainRun(init, predict, {{"data", x}});
  const std::vector<float> want_placeholder = PlainRun(init, predict, {});
  REQUIRE(want_x.size() == 5);
  REQUIRE_FALSE(Near(want_x, want_placeholder));  // else feeding `data` would prove nothing
  float sum = 0;
  for (float v : want_x) sum += v;
  CHECK(sum == Approx(1.0f).epsilon(1e-5));

  const std::vector<float> placeholder = Values(p.weights().GetBlobOrThrow("data").GetTensor());

  // By name: `data` replaces the placeholder for this run.
  CHECK(Near(Values(p.Run(Predictor::TensorMap{{"data", x}}).at("softmaxout")), want_x));
  // The weights were not modified, and the next run without `data` sees the placeholder again.
  CHECK(Values(p.weights().GetBlobOrThrow("data").GetTensor()) == placeholder);
  CHECK(Near(Values(p.Run(Predictor::TensorMap{}).at("softmaxout")), want_placeholder));
  CHECK(Near(Values(p.Run(Predictor::TensorMap{{"data", x}}).at("softmaxout")), want_x));

  // By position: Caffe2 fed external_input(i) for i < inputs.size(); `data` is first.
  auto v = p.Run(std::vector<Tensor>{x});
  REQUIRE(v.size() == 1);
  CHECK(Near(Values(v[0]), want_x));
  CHECK(Near(Values(p.Run(std::vector<Tensor>{})[0]), want_placeholder));
  std::vector<Tensor> too_many(p.filled_input_names().size() + 1, x);
  CHECK_THROWS_WITH(p.Run(too_many), Catch::Contains("at most") && Catch::Contains("'data'"));

  // Another input shape than the placeholder's: the net takes it.
  const Tensor big = Image({2, 3, 11, 11}, 2);
  std::vector<int64_t> big_shape;
  const std::vector<float> want_big = PlainRun(init, predict, {{"data", big}}, &big_shape);
  Tensor got_big = p.Run(Predictor::TensorMap{{"data", big}}).at("softmaxout");
  CHECK(got_big.shape() == big_shape);
  CHECK(got_big.shape() == std::vector<int64_t>{2, 5, 1, 1});
  CHECK(Near(Values(got_big), want_big));
  CHECK(Near(Values(p.Run(Predictor::TensorMap{}).at("softmaxout")), want_placeholder));

  // Any weight that is an external input can be replaced for one run; the weight stays.
  const Tensor zero_bias = FloatTensor({5}, {0.f, 3.f, 0.f, 0.f, 0.f});
  const std::vector<float> want_bias = PlainRun(init, predict, {{"data", x}, {"conv10_b", zero_bias}});
  REQUIRE_FALSE(Near(want_bias, want_x));
  const std::vector<float> bias_before = Values(p.weights().GetBlobOrThrow("conv10_b").GetTensor());
  CHECK(Near(Values(p.Run(Predictor::TensorMap{{"data", x}, {"conv10_b", zero_bias}}).at("softmaxout")), want_bias));
  CHECK(Values(p.weights().GetBlobOrThrow("conv10_b").GetTensor()) == bias_before);
  CHECK(Near(Values(p.Run(Predictor::TensorMap{{"data", x}}).at("softmaxout")), want_x));

  // A failed run (wrong channel count) says what it replaced, and restores the placeholder too.
  // (With oneDNN the Predictor's net is the inference rewrite's: its first Conv reads data's
  // channels-last copy; a build without it reads data itself.)
#ifdef HETNET_WITH_DNNL
  const std::string conv_input = "'data_nhwc' [1, 9, 9, 4] (NHWC)";
#else
  const std::string conv_input = "input 'data' [1, 4, 9, 9]";
#endif
  CHECK_THROWS_WITH(p.Run(Predictor::TensorMap{{"data", Image({1, 4, 9, 9}, 3)}}),
                    Catch::Contains("(Conv)") && Catch::Contains(conv_input) &&
                        Catch::Contains("given 'data' in place of the blob(s) the init net filled"));
  CHECK(Near(Values(p.Run(Predictor::TensorMap{}).at("softmaxout")), want_placeholder));
}

TEST_CASE("caffe2 files: replaced inputs are per run under concurrency", "[caffe2_files][predictor]") {
  caffe2::NetDef init, predict;
  MakeZooSqueezeNet(&init, &predict);
  Predictor p(init, predict);
  const Tensor x = Image(kPlaceholderShape, 4);
  const std::vector<float> want_x = PlainRun(init, predict, {{"data", x}});
  const std::vector<float> want_placeholder = PlainRun(init, predict, {});
  REQUIRE_FALSE(Near(want_x, want_placeholder));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        const bool feed = (i + t) % 2 == 0;
        Predictor::TensorMap in;
        if (feed) in.emplace("data", x);
        if (!Near(Values(p.Run(in).at("softmaxout")), feed ? want_x : want_placeholder)) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(wrong.load() == 0);
  CHECK(p.NumInstances() >= 1);
}

TEST_CASE("caffe2 files: Predictor mixes fed and filled inputs", "[caffe2_files][predictor]") {
  // A net whose `data` is not filled, with a weight listed before it: positional feeds `data`.
  caffe2::NetDef init, predict;
  MakeMlp(&init, &predict);
  AddFill(&init, "unused_w", {2}, {1.f, 2.f});
  predict.clear_external_input();
  for (const char* n : {"w", "b", "data"}) predict.add_external_input(n);
  Predictor p(init, predict);
  CHECK(p.input_names() == std::vector<std::string>{"data"});
  CHECK(p.filled_input_names() == std::vector<std::string>{"w", "b"});
  CHECK(p.positional_input_names() == std::vector<std::string>{"data"});
  const Tensor data = FloatTensor({2, 4}, Pattern(8, 5, 0.3f));
  const std::vector<float> want = Values(p.Run(Predictor::TensorMap{{"data", data}}).at("prob"));
  CHECK(Values(p.Run(std::vector<Tensor>{data})[0]) == want);
  CHECK_THROWS_WITH(p.Run(std::vector<Tensor>{data, data}), Catch::Contains("1 input(s)"));
  // `data` must still be given; a filled weight may be replaced; a weight that is no external input may not.
  CHECK_THROWS_WITH(p.Run(Predictor::TensorMap{{"b", FloatTensor({3}, {0, 0, 0})}}),
                    Catch::Contains("input 'data'") && Catch::Contains("not given"));
  const Tensor b0 = FloatTensor({3}, {0.f, 0.f, 0.f});
  Workspace ws;
  ws.RunNetOnce(init);
  *ws.CreateBlob("data")->GetMutable<Tensor>() = data;
  *ws.CreateBlob("b")->GetMutable<Tensor>() = b0;
  ws.RunNetOnce(predict);
  const std::vector<float> want_b0 = Values(ws.GetBlobOrThrow("prob").GetTensor());
  REQUIRE(want_b0 != want);
  // The Predictor's net is the inference rewrite's (FC on the PACKED engine): the same values to
  // float rounding, not the same bits as the workspace net on DNNL.
  const std::vector<float> got_b0 = Values(p.Run(Predictor::TensorMap{{"data", data}, {"b", b0}}).at("prob"));
  REQUIRE(got_b0.size() == want_b0.size());
  for (size_t i = 0; i < got_b0.size(); ++i) CHECK(got_b0[i] == Approx(want_b0[i]).epsilon(1e-5));
  CHECK(Values(p.Run(Predictor::TensorMap{{"data", data}}).at("prob")) == want);
  CHECK_THROWS_WITH(p.Run(Predictor::TensorMap{{"data", data}, {"unused_w", b0}}),
                    Catch::Contains("'unused_w'") && Catch::Contains("weight set by the init net"));
}

TEST_CASE("caffe2 files: a predict net that writes a filled input in place never changes the weight",
          "[caffe2_files][predictor]") {
  caffe2::NetDef init, predict;
  init.set_name("inplace_init");
  AddFill(&init, "data", {3}, {1.f, -2.f, 3.f});
  predict.set_name("inplace");
  predict.add_external_input("data");
  predict.add_external_output("out");
  AddOp(&predict, "Relu", {"data"}, {"data"});  // in place on the filled input
  AddOp(&predict, "Scale", {"data"}, {"out"});
  auto* scale = predict.mutable_op(1)->add_arg();
  scale->set_name("scale");
  scale->set_f(2.f);
  Predictor p(init, predict);
  for (int i = 0; i < 2; ++i) {
    CHECK(Values(p.Run(Predictor::TensorMap{}).at("out")) == std::vector<float>{2.f, 0.f, 6.f});
    CHECK(Values(p.weights().GetBlobOrThrow("data").GetTensor()) == std::vector<float>{1.f, -2.f, 3.f});
  }
  const Tensor fed = FloatTensor({3}, {-1.f, 5.f, -7.f});
  CHECK(Values(p.Run(Predictor::TensorMap{{"data", fed}}).at("out")) == std::vector<float>{0.f, 10.f, 0.f});
  CHECK(Values(fed) == std::vector<float>{-1.f, 5.f, -7.f});  // the caller's tensor is not written
  CHECK(Values(p.weights().GetBlobOrThrow("data").GetTensor()) == std::vector<float>{1.f, -2.f, 3.f});
  CHECK(Values(p.Run(Predictor::TensorMap{}).at("out")) == std::vector<float>{2.f, 0.f, 6.f});
}

namespace {
caffe2::OperatorDef GlobalPool(const std::string& type) {
  caffe2::OperatorDef op;
  op.set_type(type);
  op.add_input("x");
  op.add_output("y");
  IntArg(&op, "global_pooling", 1);
  return op;
}
std::vector<float> RunPool(const caffe2::OperatorDef& op, const Tensor& x) {
  Workspace ws;
  *ws.CreateBlob("x")->GetMutable<Tensor>() = x;
  ws.RunOperatorOnce(op);
  const Tensor& y = ws.GetBlobOrThrow("y").GetTensor();
  REQUIRE(y.shape() == std::vector<int64_t>{x.shape()[0], x.shape()[1], 1, 1});
  return Values(y);
}
}  // namespace

TEST_CASE("caffe2 files: global pooling accepts the default-valued kernel, stride and pad forms",
          "[caffe2_files][pool]") {
  const Tensor x = FloatTensor({1, 2, 2, 3}, {1, 2, 3, 4, 5, 9, -1, -2, -3, 0, 6, 1});
  const std::vector<float> mean = {4.f, 1.f / 6.f}, max = {9.f, 6.f};
  for (const char* type : {"AveragePool", "MaxPool"}) {
    const std::vector<float>& want = std::string(type) == "AveragePool" ? mean : max;
    INFO(type);
    std::vector<caffe2::OperatorDef> forms;
    {  // the translator's singular form, with legacy_pad as it writes it
      auto op = GlobalPool(type);
      IntArg(&op, "stride", 1);
      IntArg(&op, "pad", 0);
      IntArg(&op, "kernel", 0);
      IntArg(&op, "legacy_pad", 3);
      forms.push_back(op);
    }
    {  // the _h/_w forms
      auto op = GlobalPool(type);
      IntArg(&op, "kernel_h", 0);
      IntArg(&op, "kernel_w", 0);
      IntArg(&op, "stride_h", 1);
      IntArg(&op, "stride_w", 1);
      for (const char* n : {"pad_t", "pad_l", "pad_b", "pad_r"}) IntArg(&op, n, 0);
      forms.push_back(op);
    }
    {  // the plural forms
      auto op = GlobalPool(type);
      IntsArg(&op, "kernels", {0, 0});
      IntsArg(&op, "strides", {1, 1});
      IntsArg(&op, "pads", {0, 0, 0, 0});
      forms.push_back(op);
    }
    forms.push_back(GlobalPool(type));  // no arguments but global_pooling
    for (size_t i = 0; i < forms.size(); ++i) {
      INFO("form " << i);
      const std::vector<float> got = RunPool(forms[i], x);
      REQUIRE(got.size() == 2);
      CHECK(got[0] == Approx(want[0]));
      CHECK(got[1] == Approx(want[1]));
      // Shape inference (placement, memonger, `hetnet run`'s check) accepts them too.
      const OpSchema* schema = OpSchemaRegistry::Find(type);
      REQUIRE(schema);
      auto out = schema->InferShapes(forms[i], {TensorInfo::Of({4, 3, 7, 5}, DataType::Float)});
      REQUIRE(out.size() == 1);
      CHECK(out[0].dims == std::vector<int64_t>{4, 3, 1, 1});
    }
    // Values other than the defaults stay refused, in every form.
    std::vector<caffe2::OperatorDef> bad;
    auto with = [&](const std::function<void(caffe2::OperatorDef*)>& f) {
      auto op = GlobalPool(type);
      f(&op);
      bad.push_back(op);
    };
    with([](caffe2::OperatorDef* op) { IntArg(op, "stride", 2); IntArg(op, "pad", 0); IntArg(op, "kernel", 0); });
    with([](caffe2::OperatorDef* op) { IntArg(op, "stride", 1); IntArg(op, "pad", 1); IntArg(op, "kernel", 0); });
    with([](caffe2::OperatorDef* op) { IntsArg(op, "strides", {1, 2}); });
    with([](caffe2::OperatorDef* op) { IntsArg(op, "pads", {0, 0, 1, 0}); });
    with([](caffe2::OperatorDef* op) { IntArg(op, "stride_h", 1); IntArg(op, "stride_w", 3); });
    with([](caffe2::OperatorDef* op) { for (const char* n : {"pad_t", "pad_l", "pad_b"}) IntArg(op, n, 0); IntArg(op, "pad_r", 2); });
    for (size_t i = 0; i < bad.size(); ++i) {
      INFO("bad form " << i);
      Workspace ws;
      *ws.CreateBlob("x")->GetMutable<Tensor>() = x;
      CHECK_THROWS_WITH(ws.RunOperatorOnce(bad[i]), Catch::Contains("global_pooling takes no stride or pad"));
    }
  }
}

TEST_CASE("caffe2 files: hetnet run feeds data that the zoo init net fills", "[caffe2_files][cli]") {
  TempDir dir;
  caffe2::NetDef init, predict;
  MakeZooSqueezeNet(&init, &predict);
  const std::string init_path = dir.File("init_net.pb"), predict_path = dir.File("predict_net.pb");
  WriteProtoToFile(init_path, init);
  WriteProtoToFile(predict_path, predict);
  auto hetnet = [&](const std::string& args) {
    return RunCommand(std::string("'") + HETNET_CLI_PATH + "' " + args, dir);
  };
  const std::string nets = "run --init " + init_path + " --predict " + predict_path;

  const Tensor x = Image(kPlaceholderShape, 6);
  WriteNpy(dir.File("x.npy"), x);
  CommandResult r = hetnet(nets + " --input data=" + dir.File("x.npy") + " --output softmaxout=" + dir.File("out.npy"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("note: input 'data' replaces the blob the init net filled"));
  CHECK_THAT(r.out, !Catch::Contains("note:"));
  const std::vector<float> want_x = PlainRun(init, predict, {{"data", x}});
  CHECK(Near(Values(ReadNpy(dir.File("out.npy"))), want_x));
  CHECK_FALSE(Near(want_x, PlainRun(init, predict, {})));

  // Without --input: the placeholder, and no note.
  r = hetnet(nets + " --output softmaxout=" + dir.File("out0.npy"));
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, !Catch::Contains("note:"));
  CHECK(Near(Values(ReadNpy(dir.File("out0.npy"))), PlainRun(init, predict, {})));

  // Another shape than the placeholder's, which shape inference allows: accepted, shapes named.
  const Tensor big = Image({2, 3, 11, 11}, 7);
  WriteNpy(dir.File("big.npy"), big);
  r = hetnet(nets + " --input data=" + dir.File("big.npy") + " --output softmaxout=" + dir.File("out_big.npy"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("note: input 'data' replaces the blob the init net filled") &&
                        Catch::Contains("[1, 3, 9, 9]") && Catch::Contains("[2, 3, 11, 11]"));
  const Tensor got_big = ReadNpy(dir.File("out_big.npy"));
  CHECK(got_big.shape() == std::vector<int64_t>{2, 5, 1, 1});
  CHECK(Near(Values(got_big), PlainRun(init, predict, {{"data", big}})));

  // A shape that shape inference refuses (4 channels for conv1's 3): an error naming the input and
  // the operator, before anything runs.
  WriteNpy(dir.File("bad.npy"), Image({1, 4, 9, 9}, 8));
  r = hetnet(nets + " --input data=" + dir.File("bad.npy"));
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Catch::Contains("shape inference") && Catch::Contains("'data'") &&
                        Catch::Contains("operator #0 (Conv)"));
}
