// AutoPlace's list-schedule simulation of one placement: compute queues per device, copy queues
// per direction, the executor's dependencies, one copy per (blob, device), memory per device.
#include <algorithm>

#include "core/auto_placement_model.h"

namespace hetnet {
namespace auto_placement {

SimState Simulator::Start() const {
  SimState s;
  const int nd = p_.n_dev;
  s.avail.assign(static_cast<size_t>(p_.n_blobs) * nd, -1.0);
  s.param_on.assign(static_cast<size_t>(p_.n_blobs) * nd, 0);
  s.op_finish.assign(p_.n_ops, 0);
  s.op_dev.assign(p_.n_ops, 0);
  s.queue_free.assign(nd, 0);
  s.busy.assign(nd, 0);
  s.link_free.assign(nd * nd, 0);
  s.link_busy.assign(nd * nd, 0);
  s.mem_cur.assign(nd, 0);
  s.mem_peak.assign(nd, 0);
  s.weights.assign(nd, 0);
  for (int b = 0; b < p_.n_blobs; ++b)
    if (p_.home[b] >= 0) {
      s.avail[b * nd + p_.home[b]] = 0;
      s.mem_cur[p_.home[b]] += p_.bytes[b];
      s.mem_peak[p_.home[b]] = s.mem_cur[p_.home[b]];
    }
  return s;
}

double Simulator::Ensure(SimState* s, int b, int dev) const {
  const int nd = p_.n_dev;
  if (p_.param[b]) {  // loaded onto every device that reads it, before the run
    char& on = s->param_on[b * nd + dev];
    if (!on) s->weights[dev] += p_.bytes[b];
    on = 1;
    return 0;
  }
  if (s->avail[b * nd + dev] >= 0) return s->avail[b * nd + dev];
  int src = -1;
  for (int d = 0; d < nd; ++d)
    if (s->avail[b * nd + d] >= 0 && (src < 0 || s->avail[b * nd + d] < s->avail[b * nd + src])) src = d;
  if (src < 0) return 0;  // never written: net creation reports it
  const int link = src * nd + dev;
  double start = std::max(s->avail[b * nd + src], s->link_free[link]);
  if (p_.sequential) {  // issued by the host in net order, behind the GPU work issued before it
    start = std::max(start, s->queue_free[0]);
    if (src != 0) start = std::max(start, s->queue_free[src]);
    if (dev != 0) start = std::max(start, s->queue_free[dev]);
  }
  const double took = p_.CopyUs(src, dev, p_.bytes[b]);
  if (p_.sequential) {  // the copy holds the GPUs' streams, and the host when it lands there
    for (int d : {src, dev})
      if (d != 0 || dev == 0) s->queue_free[d] = std::max(s->queue_free[d], start + took);
  }
  s->link_free[link] = start + took;
  s->link_busy[link] += took;
  s->avail[b * nd + dev] = start + took;
  s->mem_cur[dev] += p_.bytes[b];
  s->mem_peak[dev] = std::max(s->mem_peak[dev], s->mem_cur[dev]);
  return start + took;
}

void Simulator::Step(SimState* s, int dev) const {
  const int op = s->next_op++;
  const int nd = p_.n_dev;
  // Inputs first: the copy ops come before their reader in net order.
  double ready = 0;
  const auto& need = p_.in_need[op][dev];
  for (size_t k = 0; k < p_.in_blobs[op].size(); ++k) ready = std::max(ready, Ensure(s, p_.in_blobs[op][k], need[k]));
  double start = std::max(s->queue_free[dev], ready);
  const double launch = p_.launch_us[op][dev];
  if (launch > 0) {  // the host issues it once its inputs from other devices are done
    double issue = s->queue_free[0];
    for (int parent : p_.parents[op])
      if (s->op_dev[parent] != dev) issue = std::max(issue, s->op_finish[parent]);
    s->queue_free[0] = issue + launch;
    s->busy[0] += launch;
    start = std::max(start, issue + launch);
  }
  s->op_dev[op] = dev;
  for (int parent : p_.parents[op]) start = std::max(start, s->op_finish[parent]);
  const double t = p_.compute_us[op][dev];
  const double finish = start + t;
  s->queue_free[dev] = finish;
  s->busy[dev] += t;
  s->op_finish[op] = finish;
  s->makespan = std::max(s->makespan, finish);
  const auto& out_need = p_.out_need[op][dev];
  for (size_t k = 0; k < p_.out_blobs[op].size(); ++k) {
    const int b = p_.out_blobs[op][k];
    const int at = out_need[k];
    for (int d = 0; d < nd; ++d)  // copies elsewhere are stale now
      if (d != at && s->avail[b * nd + d] >= 0) {
        s->avail[b * nd + d] = -1;
        s->mem_cur[d] -= p_.bytes[b];
      }
    if (s->avail[b * nd + at] < 0) {
      s->mem_cur[at] += p_.bytes[b];
      s->mem_peak[at] = std::max(s->mem_peak[at], s->mem_cur[at]);
    }
    s->avail[b * nd + at] = finish;
  }
  for (int b : p_.freed_after[op])
    for (int d = 0; d < nd; ++d)
      if (d != p_.home[b] && s->avail[b * nd + d] >= 0) {
        s->avail[b * nd + d] = -1;
        s->mem_cur[d] -= p_.bytes[b];
      }
}

Evaluation Simulator::Finish(SimState s) const {
  for (int b : p_.final_outputs) s.makespan = std::max(s.makespan, Ensure(&s, b, 0));
  // Fixed costs of a run: starting it on the CPU, waiting for each GPU it used at its end.
  for (int d = 0; d < p_.n_dev; ++d)
    if (d == 0 || s.busy[d] > 0) s.makespan += p_.run_overhead_us[d];
  Evaluation e;
  e.makespan = s.makespan;
  e.busy = s.busy;
  if (p_.throughput) {  // steady state of a pipeline: the busiest compute or copy queue
    e.cost = 0;
    for (double b : s.busy) e.cost = std::max(e.cost, b), e.secondary += b * b;
    for (double b : s.link_busy) e.cost = std::max(e.cost, b), e.secondary += b * b;
  } else {
    e.cost = s.makespan;
    for (double b : s.busy) e.secondary += b;
    for (double b : s.link_busy) e.secondary += b;
  }
  e.need.resize(p_.n_dev);
  for (int d = 0; d < p_.n_dev; ++d) {
    e.need[d] = s.weights[d] + s.mem_peak[d];
    const double over = p_.caps[d] > 0 ? e.need[d] - static_cast<double>(p_.caps[d]) : 0;
    if (over > 0 && (e.over_dev < 0 || over > e.over_bytes)) {
      e.over_dev = d;
      e.over_bytes = over;
    }
  }
  if (e.over_dev >= 0) e.cost = kInf;
  return e;
}

Evaluation Simulator::Run(const std::vector<int>& placement) const {
  SimState s = Start();
  for (int i = 0; i < p_.n_ops; ++i) Step(&s, placement[i]);
  return Finish(std::move(s));
}

double Simulator::LowerBound(const SimState& s, const std::vector<double>& min_rest_us) const {
  for (int d = 0; d < p_.n_dev; ++d)
    if (p_.caps[d] > 0 && s.weights[d] + s.mem_peak[d] > static_cast<double>(p_.caps[d])) return kInf;
  const double rest = s.next_op < p_.n_ops ? min_rest_us[s.next_op] : 0;
  double queues = rest;
  double bound = 0;
  for (int d = 0; d < p_.n_dev; ++d) {
    queues += p_.throughput ? s.busy[d] : s.queue_free[d];
    bound = std::max(bound, p_.throughput ? s.busy[d] : s.makespan);
  }
  if (p_.throughput)
    for (double b : s.link_busy) bound = std::max(bound, b);
  // Every remaining op joins some queue after what that queue already holds.
  return std::max(bound, queues / p_.n_dev);
}

}  // namespace auto_placement
}  // namespace hetnet
