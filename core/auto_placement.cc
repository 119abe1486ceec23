// AutoPlace: builds the cost model, searches, and explains the chosen placement.
#include "core/auto_placement.h"

#include <chrono>
#include <cstdio>
#include <sstream>

#include "core/auto_placement_model.h"
#include "core/error.h"

namespace hetnet {

namespace {

using auto_placement::Evaluation;
using auto_placement::kInf;
using auto_placement::Problem;

std::string Us(double us) {
  char buf[32];
  if (us >= 100) std::snprintf(buf, sizeof(buf), "%.0f us", us);
  else std::snprintf(buf, sizeof(buf), "%.3g us", us);
  return buf;
}

std::string Bytes(double b) {
  char buf[32];
  if (b >= 1 << 20) std::snprintf(buf, sizeof(buf), "%.1f MiB", b / (1 << 20));
  else if (b >= 1 << 10) std::snprintf(buf, sizeof(buf), "%.1f KiB", b / (1 << 10));
  else std::snprintf(buf, sizeof(buf), "%.0f B", b);
  return buf;
}

// Why op `i` runs on x[i]: the predicted run with the op moved to each other device.
std::string Why(const Problem& p, const auto_placement::Simulator& sim, std::vector<int> x, int i,
                const Evaluation& chosen) {
  std::vector<int> allowed;
  for (int d = 0; d < p.n_dev; ++d)
    if (p.compute_us[i][d] < kInf) allowed.push_back(d);
  if (p.n_dev == 1) return MakeString(p.dev_names[0], " is the only candidate device");
  if (allowed.size() == 1)
    return MakeString("only ", p.dev_names[allowed[0]], " has a kernel for ", p.types[i], " among the candidates");
  const int at = x[i];
  const char* what = p.throughput ? " per run (busiest queue)" : " for the run";
  std::string why = MakeString(p.dev_names[at], " ", Us(chosen.cost), what);
  for (int d : allowed) {
    if (d == at) continue;
    x[i] = d;
    const Evaluation e = sim.Run(x);
    why += e.over_dev >= 0 ? MakeString(" vs ", p.dev_names[d], ": ", p.dev_names[e.over_dev], " over its memory cap")
                           : MakeString(" vs ", p.dev_names[d], " ", Us(e.cost));
  }
  return why + " (copies included)";
}

// Replaces a mixed placement by the best one-device placement (pins kept) unless the mixed one is
// predicted to win by more than min_gain of that placement's cost (options.min_mixed_gain says why).
void PreferOneDevice(const Problem& p, double min_gain, auto_placement::SearchResult* found) {
  if (min_gain <= 0 || found->eval.over_dev >= 0) return;
  auto_placement::Simulator sim(p);
  std::vector<int> best_x;
  Evaluation best_e;
  for (int d = 0; d < p.n_dev; ++d) {
    std::vector<int> x = auto_placement::AllOn(p, d, true);
    if (x == found->placement) return;  // already one device
    const Evaluation e = sim.Run(x);
    if (e.over_dev < 0 && e.cost < best_e.cost) best_x = std::move(x), best_e = e;
  }
  if (!best_x.empty() && best_e.cost <= found->eval.cost * (1 + min_gain)) {
    found->placement = std::move(best_x);
    found->eval = best_e;
  }
}

}  // namespace

AutoPlacementResult AutoPlace(const caffe2::NetDef& net, const std::map<std::string, TensorInfo>& input_shapes,
                              const DeviceProfile& profile, const AutoPlacementOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> pin_reasons;
  const Problem p = auto_placement::BuildProblem(net, input_shapes, profile, options, &pin_reasons);
  int free_ops = 0;
  for (int i = 0; i < p.n_ops; ++i) free_ops += p.Free(i);
  auto_placement::SearchResult found;
  if (free_ops <= options.exact_limit) found = auto_placement::ExactSearch(p);
  if (!found.exact) {  // large net, or the exhaustive search hit its node limit
    auto h = auto_placement::HeuristicSearch(p, options.heuristic_budget_ms);
    h.evaluated += found.evaluated;
    if (found.placement.empty() || h.eval.cost < found.eval.cost) found = h;
    found.evaluated = h.evaluated;
  }
  PreferOneDevice(p, options.min_mixed_gain, &found);
  const Evaluation& best = found.eval;
  if (best.over_dev >= 0) {
    const int d = best.over_dev;
    HN_THROW(kInvalidArgument, "no placement of net '", net.name(), "' fits the memory caps: the closest found needs ",
             static_cast<int64_t>(best.need[d]), " bytes (", Bytes(best.need[d]), ", weights + activation peak) on ",
             p.dev_names[d], ", whose cap is ", p.caps[d], " bytes (", Bytes(static_cast<double>(p.caps[d])),
             "); raise that cap or add a device");
  }
  auto_placement::Simulator sim(p);
  AutoPlacementResult r;
  r.net = net;
  for (int k = 0; k < r.net.arg_size(); ++k)  // placed now: placing the result again changes nothing
    if (r.net.arg(k).name() == "placement") {
      r.net.mutable_arg()->DeleteSubrange(k, 1);
      break;
    }
  const auto& x = found.placement;
  for (int i = 0; i < p.n_ops; ++i) {
    auto* op = r.net.mutable_op(i);
    const bool user_pin = op->has_device_option() && !options.override_pinned;
    if (!user_pin) DeviceToOption(p.devs[x[i]], op->mutable_device_option());
    OpPrediction pred;
    pred.op = i;
    pred.type = p.types[i];
    for (int d = 0; d < p.n_dev; ++d)
      if (p.compute_us[i][d] < kInf) pred.predicted_us[p.dev_names[d]] = p.OpUs(i, d);
    pred.chosen = user_pin ? DeviceFromOption(op->device_option()).str() : p.dev_names[x[i]];
    pred.pinned = p.pinned[i] >= 0;
    pred.why = pred.pinned ? pin_reasons[i] : Why(p, sim, x, i, best);
    r.ops.push_back(std::move(pred));
  }
  r.predicted_us = best.makespan;
  r.objective_us = best.cost;
  r.objective = p.throughput ? "throughput" : "latency";
  r.exact = found.exact;
  r.placements_evaluated = found.evaluated;
  for (int b = 0; b < p.n_blobs; ++b)
    if (p.home[b] >= 0) r.data_inputs.insert(p.blob_names[b]);
  r.profile_source = MakeString(profile.machine, profile.source.empty() ? "" : "; ", profile.source);
  for (int d = 0; d < p.n_dev; ++d) {
    r.peak_bytes[p.dev_names[d]] = static_cast<int64_t>(best.need[d]);
    r.busy_us[p.dev_names[d]] = best.busy[d];
    if (p.caps[d] > 0) r.caps[p.dev_names[d]] = p.caps[d];
    bool everywhere = true;
    for (int i = 0; i < p.n_ops; ++i) everywhere &= p.compute_us[i][d] < kInf;
    if (!everywhere) continue;
    const Evaluation e = sim.Run(auto_placement::AllOn(p, d, false));
    if (e.over_dev < 0) r.baselines_us["all " + p.dev_names[d]] = e.makespan;
  }
  r.planner_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::string AutoPlacementResult::ToText() const {
  std::ostringstream s;
  char ms[32];
  std::snprintf(ms, sizeof(ms), "%.2f", planner_ms);
  s << "auto placement of net '" << net.name() << "': objective " << objective << ", "
    << (exact ? "exact search" : "heuristic search") << " (" << placements_evaluated << " placements, " << ms
    << " ms)\n";
  s << "  profile: " << profile_source << "\n";
  s << "  predicted run: " << Us(predicted_us) << " (copies included)";
  if (objective == "throughput") s << ", busiest queue " << Us(objective_us) << " per run";
  for (const auto& [name, us] : baselines_us) s << "; " << name << " " << Us(us);
  s << "\n  memory (weights + activation peak):";
  for (const auto& [dev, bytes] : peak_bytes) {
    s << " " << dev << " " << Bytes(static_cast<double>(bytes));
    auto cap = caps.find(dev);
    if (cap != caps.end()) s << " of " << Bytes(static_cast<double>(cap->second));
  }
  s << "\n  compute per device:";
  for (const auto& [dev, us] : busy_us) s << " " << dev << " " << Us(us);
  s << "\n";
  for (const auto& op : ops) {
    s << "  #" << op.op << " " << op.type << " -> " << op.chosen << "  [";
    bool first = true;
    for (const auto& [dev, us] : op.predicted_us) {
      s << (first ? "" : ", ") << dev << " " << Us(us);
      first = false;
    }
    s << "]  " << op.why << "\n";
  }
  return s.str();
}

}  // namespace hetnet
