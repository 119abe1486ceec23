// `hetnet run`: feeds inputs from files, runs the nets through a Predictor, prints or saves outputs.
#include <chrono>
#include <iostream>
#include <map>

#include "core/inference_fusion.h"
#include "core/memonger.h"
#include "core/net.h"
#include "core/npy.h"
#include "core/op_schema.h"
#include "core/predictor.h"
#include "core/profiler.h"
#include "core/proto_io.h"
#include "core/reduced_precision.h"
#include "tools/cli_common.h"

namespace hetnet_cli {

namespace {
// An input that replaces a blob the init net filled (a model-zoo `data` placeholder) may have
// another shape; the predict net's shape inference must accept it. Says so on stderr, and refuses
// (naming the input, both shapes and the operator) where shape inference finds the net cannot take it.
void NoteReplacedInputs(const hetnet::Predictor& predictor, const hetnet::Predictor::TensorMap& feed) {
  const auto& filled = predictor.filled_input_names();
  std::map<std::string, hetnet::TensorInfo> known;
  std::vector<std::string> reshaped;
  for (const auto& name : filled) {
    const hetnet::Tensor& weight = predictor.weights().GetBlobOrThrow(name).GetTensor();
    auto it = feed.find(name);
    if (it == feed.end()) {
      known[name] = hetnet::TensorInfo::Of(weight.shape(), weight.dtype());
      continue;
    }
    const hetnet::Tensor& t = it->second;
    std::cerr << "note: input '" << name << "' replaces the blob the init net filled";
    if (t.shape() != weight.shape() || t.dtype() != weight.dtype()) {
      std::cerr << " (" << weight.DebugString() << " there, " << t.DebugString() << " given)";
      reshaped.push_back(name);
    }
    std::cerr << "\n";
    known[name] = hetnet::TensorInfo::Of(t.shape(), t.dtype());
  }
  if (reshaped.empty()) return;
  for (const auto& [name, t] : feed) known.emplace(name, hetnet::TensorInfo::Of(t.shape(), t.dtype()));
  const caffe2::NetDef& net = predictor.predict_net();
  for (int i = 0; i < net.op_size(); ++i) {
    const auto& op = net.op(i);
    std::vector<hetnet::TensorInfo> in;
    for (const auto& name : op.input()) {
      auto it = known.find(name);
      in.push_back(it == known.end() ? hetnet::TensorInfo::Unknown() : it->second);
    }
    std::vector<hetnet::TensorInfo> out;
    const hetnet::OpSchema* schema = hetnet::OpSchemaRegistry::Find(op.type());
    if (schema && schema->HasShapeInference()) {
      try {
        out = schema->InferShapes(op, in);
      } catch (hetnet::Error& e) {
        std::string names;
        for (const auto& n : reshaped) names += (names.empty() ? "'" : ", '") + n + "'";
        e.AddContext(hetnet::OperatorContext(net, i));
        e.AddContext("the net's shape inference does not accept the shape given for input " + names +
                     " (it differs from the blob the init net filled)");
        throw;
      }
    }
    for (int k = 0; k < op.output_size(); ++k) {
      if (k < static_cast<int>(out.size()) && out[k].known) known[op.output(k)] = out[k];
      else known.erase(op.output(k));
    }
  }
}
}  // namespace

const char* const kRunHelp =
    "usage: hetnet run --predict PREDICT_NET [--init INIT_NET] [--input NAME=FILE ...]\n"
    "       hetnet run MODEL.onnx [--device DEV] [--input NAME=FILE ...] [other options as above]\n"
    "                  [--output NAME[=OUT.npy] ...] [--iters N] [--profile] [--trace FILE] [--memonger]\n"
    "                  [--no-optimize] [--cuda-graph] [--precision P]\n"
    "                  [--strict] [--soft-placement]\n"
    "\n"
    "Runs INIT_NET once (weights), then PREDICT_NET on the inputs, like Caffe2's Predictor.\n"
    "Nets are NetDef files, binary or text format; an ONNX model is imported into the two nets.\n"
    "  --init FILE          init net (optional: a predict net may need no weights)\n"
    "  --predict FILE       predict net (required; or MODEL.onnx as the first argument)\n"
    "  --input NAME=FILE    feed blob NAME from FILE: a .npy file or a serialized TensorProto\n"
    "                       (detected by content); repeat for every external input. An input that the\n"
    "                       init net also fills (a model-zoo `data` placeholder) replaces that blob,\n"
    "                       with a note on stderr; its shape may differ where shape inference allows\n"
    "  --output NAME[=OUT]  print blob NAME (default: every external output), or write it to OUT as .npy;\n"
    "                       a blob that is not an external output is fetched as well\n"
    "  --iters N            run N times (default 1) and report the mean time per run\n"
    "  --profile            also profile N runs: per-op-type times and the share spent in copies\n"
    "  --trace FILE         also write a Chrome trace (chrome://tracing, Perfetto) of N profiled runs\n"
    "  --memonger           share memory between intermediate blobs whose lifetimes do not overlap\n"
    "  --precision P        bfloat16 (bf16) or float16 (fp16): operators with a kernel for P run on P\n"
    "                       blobs (float32 accumulation), weights they read converted once; inputs\n"
    "                       and outputs stay float32 (default float32; CPU: bfloat16 Conv and FC;\n"
    "                       part of the inference rewrite, so --no-optimize leaves it out too)\n"
    "  --no-optimize        run the predict net as written: no BN folding, Conv/FC+Relu fusion or\n"
    "                       test-mode Dropout removal at net creation (core/inference_fusion.h)\n"
    "  --cuda-graph         run the predict net on the CUDA graph executor (net type cuda_graph): from\n"
    "                       the second run on, each run of GPU operators is one graph launch; says\n"
    "                       what it captured and why not the rest (device/cuda/cuda_graph_net.cc)\n"
    "  -h, --help           this help\n"
    "placement:\n";

int RunCommand(int argc, char** argv) {
  ArgReader args(argc, argv, 1);
  std::string init_path, predict_path, value, onnx_device;
  std::vector<std::pair<std::string, std::string>> inputs, outputs;
  long iters = 1;
  bool profile = false, memonger = false, cuda_graph = false;
  hetnet::DataType precision = hetnet::DataType::Float;
  std::string trace_path;
  while (!args.Done()) {
    if (args.Switch("--help") || args.Switch("-h")) {
      std::cout << kRunHelp << kPlacementHelp << kOnnxHelp;
      return kExitOk;
    } else if (PlacementSwitch(args)) {
    } else if (args.Flag("--init", &init_path) || args.Flag("--predict", &predict_path)) {
    } else if (args.Flag("--input", &value)) {
      inputs.push_back(SplitNameValue(value, "--input", true));
    } else if (args.Flag("--output", &value)) {
      outputs.push_back(SplitNameValue(value, "--output", false));
    } else if (args.Switch("--profile")) {
      profile = true;
    } else if (args.Switch("--memonger")) {
      memonger = true;
    } else if (args.Switch("--cuda-graph")) {
      cuda_graph = true;
    } else if (args.Switch("--no-optimize")) {
      hetnet::DefaultInferenceFusionOptions().enabled = false;
    } else if (args.Flag("--precision", &value)) {
      precision = hetnet::ParsePrecision(value);
    } else if (args.Flag("--trace", &trace_path) || args.Flag("--device", &onnx_device)) {
    } else if (args.Peek().rfind("-", 0) != 0 && predict_path.empty()) {
      predict_path = args.Next();  // MODEL (an ONNX file, or a predict net)
    } else if (args.Flag("--iters", &value)) {
      char* end = nullptr;
      iters = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end || iters < 1) throw UsageError("--iters needs a positive integer, got '" + value + "'");
    } else {
      throw UsageError("unknown option '" + args.Peek() + "' for run");
    }
  }
  if (predict_path.empty()) throw UsageError("run needs --predict PREDICT_NET (or MODEL.onnx)");

  ModelNets nets = LoadModelNets(predict_path, init_path, onnx_device);
  caffe2::NetDef init_net = std::move(nets.init), predict_net = std::move(nets.predict);
  // Requested blobs that the net does not export are exported for this run.
  for (const auto& [name, file] : outputs) {
    bool listed = false;
    for (const auto& o : predict_net.external_output()) listed |= o == name;
    if (!listed) predict_net.add_external_output(name);
  }
  hetnet::Predictor::TensorMap feed;
  for (const auto& [name, file] : inputs) {
    try {
      feed[name] = LoadTensorFile(file);
    } catch (hetnet::Error& e) {
      e.AddContext("while loading input '" + name + "' from '" + file + "'");
      throw;
    }
  }
  if (memonger) {  // shapes for the report: the init net's fills and the inputs
    hetnet::MemongerOptions opts;
    opts.input_shapes = hetnet::InferBlobShapes(init_net);
    for (const auto& [name, t] : feed) opts.input_shapes[name] = hetnet::TensorInfo::Of(t.shape(), t.dtype());
    hetnet::OptimizedNet planned = hetnet::OptimizeInferenceNet(predict_net, opts);
    std::cout << planned.report.ToText();
    predict_net = planned.net;
  }
  if (cuda_graph) predict_net.set_type("cuda_graph");  // unknown in a build without CUDA: an error naming the net
  if (precision != hetnet::DataType::Float) hetnet::SetNetPrecision(&predict_net, precision);
  hetnet::Predictor predictor(init_net, predict_net);
  if (precision != hetnet::DataType::Float)
    std::cout << "precision " << hetnet::PrecisionName(precision) << ": " << predictor.narrowed_weights().size()
              << " weights converted\n";
  NoteReplacedInputs(predictor, feed);
  hetnet::Predictor::TensorMap result;
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < iters; ++i) result = predictor.Run(feed);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / iters;

  if (outputs.empty())
    for (const auto& name : predictor.output_names()) outputs.emplace_back(name, "");
  for (const auto& [name, file] : outputs) {
    const hetnet::Tensor& t = result.at(name);
    if (file.empty()) {
      std::cout << SummarizeTensor(name, t) << "\n";
    } else {
      hetnet::WriteNpy(file, t);
      std::cout << name << ": " << t.DebugString() << " written to " << file << "\n";
    }
  }
  if (iters > 1) std::cout << "mean time per run: " << ms << " ms over " << iters << " runs\n";
  if (cuda_graph) std::cout << predictor.ExecutorNotes() << "\n";
  if (profile || !trace_path.empty()) {  // the predict net in a workspace of its own, profiled
    hetnet::Workspace ws;
    ws.RunNetOnce(init_net);
    for (const auto& [name, t] : feed) *ws.CreateBlob(name)->GetMutable<hetnet::Tensor>() = t;
    hetnet::RequestInferenceRewrite(&predict_net);  // profile the net the Predictor ran
    hetnet::NarrowConstantsInPlace(predict_net, &ws);  // with its weights (reduced precision)
    hetnet::ProfileResult r = hetnet::ProfileNet(ws.CreateNet(predict_net), 1, static_cast<int>(iters),
                                                 !trace_path.empty());
    if (profile) std::cout << "\nprofile of net '" << predict_net.name() << "':\n" << r.summary.ToMarkdown();
    if (!trace_path.empty()) {
      hetnet::WriteChromeTrace(trace_path, r.runs);
      std::cout << "trace of " << r.runs.size() << " runs written to " << trace_path << "\n";
    }
  }
  return kExitOk;
}

}  // namespace hetnet_cli
