// AutoPlace's searches over placements: exhaustive with branch and bound for small nets, and for
// large ones the best of the uniform placements and a greedy list schedule, improved by single-op
// flips and contiguous-segment moves until nothing improves (or the time budget ends).
#include <algorithm>
#include <chrono>
#include <functional>
#include <random>
#include <tuple>

#include "core/auto_placement_model.h"

namespace hetnet {
namespace auto_placement {

namespace {

// Feasible placements by cost; infeasible ones after them, by how far they are over a cap (so a
// search started over a cap still walks towards feasibility).
std::tuple<double, double, double> Key(const Evaluation& e) {
  return e.over_dev < 0 ? std::make_tuple(0.0, e.cost, e.secondary) : std::make_tuple(e.over_bytes, e.makespan, 0.0);
}

bool Allowed(const Problem& p, int op, int d) { return p.compute_us[op][d] < kInf; }

std::vector<double> MinRestUs(const Problem& p) {
  std::vector<double> rest(p.n_ops + 1, 0);
  for (int i = p.n_ops - 1; i >= 0; --i) {
    double best = kInf;
    if (p.pinned[i] >= 0) {
      best = p.compute_us[i][p.pinned[i]];
    } else {  // (the device's part: the bound counts work per queue, and a launch joins the CPU's)
      for (int d = 0; d < p.n_dev; ++d) best = std::min(best, p.compute_us[i][d]);
    }
    rest[i] = rest[i + 1] + best;
  }
  return rest;
}

class Timer {
 public:
  explicit Timer(double budget_ms) : budget_ms_(budget_ms), start_(std::chrono::steady_clock::now()) {}
  bool Expired() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count() > budget_ms_;
  }

 private:
  double budget_ms_;
  std::chrono::steady_clock::time_point start_;
};

// Keeps the best placement seen, infeasible ones included (for the refusal's message).
struct Best {
  std::vector<int> placement;
  Evaluation eval;
  std::tuple<double, double, double> key{kInf, kInf, kInf};
  int64_t evaluated = 0;
  double cost() const { return eval.over_dev < 0 ? eval.cost : kInf; }
  bool Offer(const std::vector<int>& x, const Evaluation& e) {
    ++evaluated;
    const auto k = Key(e);
    if (k >= key) return false;
    key = k;
    placement = x;
    eval = e;
    return true;
  }
};

std::vector<int> Greedy(const Problem& p, const Simulator& sim) {
  std::vector<int> x(p.n_ops, 0);
  SimState s = sim.Start();
  for (int i = 0; i < p.n_ops; ++i) {
    int pick = p.pinned[i];
    if (pick < 0) {
      double best = kInf;
      for (int d = 0; d < p.n_dev; ++d) {
        if (!Allowed(p, i, d)) continue;
        SimState t = s;
        sim.Step(&t, d);
        double score = p.throughput ? *std::max_element(t.busy.begin(), t.busy.end()) : t.op_finish[i];
        for (int e = 0; e < p.n_dev; ++e)
          if (p.caps[e] > 0 && t.weights[e] + t.mem_peak[e] > static_cast<double>(p.caps[e])) score += 1e200;
        if (pick < 0 || score < best) {
          best = score;
          pick = d;
        }
      }
    }
    x[i] = pick;
    sim.Step(&s, pick);
  }
  return x;
}

}  // namespace

std::vector<int> AllOn(const Problem& p, int dev, bool keep_pins) {
  std::vector<int> x(p.n_ops);
  for (int i = 0; i < p.n_ops; ++i) {
    if (keep_pins && p.pinned[i] >= 0) {
      x[i] = p.pinned[i];
    } else if (Allowed(p, i, dev)) {
      x[i] = dev;
    } else {
      x[i] = 0;
      for (int d = 0; d < p.n_dev && !Allowed(p, i, x[i]); ++d) x[i] = d;
    }
  }
  return x;
}

SearchResult ExactSearch(const Problem& p) {
  Simulator sim(p);
  Best best;
  for (int d = 0; d < p.n_dev; ++d) {  // an incumbent to prune against from the start
    auto x = AllOn(p, d, true);
    best.Offer(x, sim.Run(x));
  }
  const std::vector<double> rest = MinRestUs(p);
  std::vector<int> cur(p.n_ops, 0);
  int64_t nodes = 0;
  const int64_t node_limit = 20000000;  // never hang: past it the answer is only the best found
  bool complete = true;
  std::function<void(SimState&)> dfs = [&](SimState& s) {
    while (s.next_op < p.n_ops && p.pinned[s.next_op] >= 0) {
      cur[s.next_op] = p.pinned[s.next_op];
      sim.Step(&s, p.pinned[s.next_op]);
    }
    if (s.next_op == p.n_ops) {
      best.Offer(cur, sim.Finish(s));
      return;
    }
    const int op = s.next_op;
    std::vector<int> order;
    for (int d = 0; d < p.n_dev; ++d)
      if (Allowed(p, op, d)) order.push_back(d);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return p.OpUs(op, a) < p.OpUs(op, b); });
    for (int d : order) {
      if (++nodes > node_limit) {
        complete = false;
        return;
      }
      SimState child = s;
      cur[op] = d;
      sim.Step(&child, d);
      const double bound = sim.LowerBound(child, rest);
      if (bound == kInf || bound >= best.cost()) continue;  // over a cap, or cannot beat the best
      dfs(child);
    }
  };
  SimState root = sim.Start();
  dfs(root);
  SearchResult r;
  r.placement = best.placement;
  r.eval = best.eval;
  r.exact = complete;
  r.evaluated = best.evaluated + nodes;
  return r;
}

SearchResult HeuristicSearch(const Problem& p, double budget_ms) {
  constexpr int kPairLimit = 32;  // free ops up to which the descent also moves every pair
  Simulator sim(p);
  Timer timer(budget_ms);
  Best best;
  for (int d = 0; d < p.n_dev; ++d) {
    auto x = AllOn(p, d, true);
    best.Offer(x, sim.Run(x));
  }
  {
    auto x = Greedy(p, sim);
    best.Offer(x, sim.Run(x));
  }
  std::vector<int> free_ops;
  for (int i = 0; i < p.n_ops; ++i)
    if (p.pinned[i] < 0) free_ops.push_back(i);
  const int nf = static_cast<int>(free_ops.size());
  int64_t evaluated = best.evaluated;
  // cones[i]: op i and every op that depends on it (net order is topological).
  std::vector<std::vector<int>> cones(p.n_ops);
  if (nf <= kPairLimit)
    for (int i = p.n_ops - 1; i >= 0; --i) {
      std::vector<char> in(p.n_ops, 0);
      in[i] = 1;
      for (int j = i + 1; j < p.n_ops; ++j)
        for (int parent : p.parents[j]) in[j] |= in[parent];
      for (int j = i; j < p.n_ops; ++j)
        if (in[j]) cones[i].push_back(j);
    }
  // Local search from `start`: moves runs of free ops [lo, hi) (in net order; lengths 1, 2, 4, ...)
  // to one device where each has a kernel, keeping every improvement, until none improves.
  auto descend = [&](const std::vector<int>& start) {
    Best cur;
    cur.Offer(start, sim.Run(start));
    auto try_move = [&](int lo, int hi, int d) {
      std::vector<int> x = cur.placement;
      bool changed = false;
      for (int k = lo; k < hi; ++k) {
        const int op = free_ops[k];
        if (x[op] != d && Allowed(p, op, d)) {
          x[op] = d;
          changed = true;
        }
      }
      return changed && cur.Offer(x, sim.Run(x));
    };
    // Two ops moved at once, anywhere in the net (the same device or trading devices): a better
    // balance of queues, or a copy saved, may need two ops to move where one alone makes things
    // worse (two leaves back to the CPU, whose outputs would each cross the link).
    auto try_pair = [&](int a, int b) {
      bool improved = false;
      const int oa = free_ops[a], ob = free_ops[b];
      for (int da = 0; da < p.n_dev; ++da)
        for (int db = 0; db < p.n_dev; ++db) {
          std::vector<int> x = cur.placement;
          if (x[oa] == da || x[ob] == db || !Allowed(p, oa, da) || !Allowed(p, ob, db)) continue;
          x[oa] = da;
          x[ob] = db;
          improved |= cur.Offer(x, sim.Run(x));
        }
      return improved;
    };
    // An op's whole downstream cone, with or without the op: leaves that end on the CPU save
    // their copies back only when the ops between them move too.
    auto try_cone = [&](int k, int d) {
      bool improved = false;
      for (bool with_op : {true, false}) {
        std::vector<int> x = cur.placement;
        bool changed = false;
        for (int o : cones[free_ops[k]])
          if ((with_op || o != free_ops[k]) && p.pinned[o] < 0 && x[o] != d && Allowed(p, o, d)) {
            x[o] = d;
            changed = true;
          }
        improved |= changed && cur.Offer(x, sim.Run(x));
      }
      return improved;
    };
    for (bool improved = true; improved && !timer.Expired();) {
      improved = false;
      if (nf <= kPairLimit)
        for (int k = 0; k < nf && !timer.Expired(); ++k)
          for (int d = 0; d < p.n_dev; ++d) improved |= try_cone(k, d);
      for (int len = 1; len <= std::max(1, nf) && !timer.Expired(); len *= 2)
        for (int lo = 0; lo + len <= nf && !timer.Expired(); lo += std::max(1, len / 2))
          for (int d = 0; d < p.n_dev; ++d) improved |= try_move(lo, lo + len, d);
      if (nf <= kPairLimit)
        for (int a = 0; a < nf && !timer.Expired(); ++a)
          for (int b = a + 1; b < nf; ++b) improved |= try_pair(a, b);
    }
    evaluated += cur.evaluated;
    best.Offer(cur.placement, cur.eval);
  };
  descend(best.placement);
  // Iterated local search: kick the best placement (a random run of ops to a random device) and
  // descend again, a few times; a fixed seed keeps plans reproducible.
  std::mt19937 rng(17);
  const int kicks = nf <= kPairLimit ? 32 : 8;  // small nets: cheap to descend more often
  for (int kick = 0; kick < kicks && nf > 0 && !timer.Expired(); ++kick) {
    std::vector<int> x = best.placement;
    const int len = 1 + static_cast<int>(rng() % std::max(1, nf / 3));
    const int lo = static_cast<int>(rng() % (nf - std::min(len, nf) + 1));
    const int d = static_cast<int>(rng() % p.n_dev);
    for (int k = lo; k < std::min(nf, lo + len); ++k)
      if (Allowed(p, free_ops[k], d)) x[free_ops[k]] = d;
    descend(x);
  }
  SearchResult r;
  r.placement = best.placement;
  r.eval = best.eval;
  r.exact = false;
  r.evaluated = evaluated;
  return r;
}

}  // namespace auto_placement
}  // namespace hetnet
