#include "core/dag_graph.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace hetnet {

namespace {
// Ops whose input 0 is a common world (operators/communicator_op.h). Collectives on one world must
// run one at a time and in the same order on every rank, but they only read the world blob, so the
// hazards below would let them overlap: ops sharing input 0 are chained in net order instead.
bool IsCommunicatorOp(const caffe2::OperatorDef& op) {
  static const std::set<std::string> types = {"CloneCommonWorld", "DestroyCommonWorld", "Broadcast", "Reduce",
                                              "Allreduce", "ReduceScatter", "Allgather", "Barrier",
                                              "SendTensor", "ReceiveTensor"};
  return op.input_size() > 0 && types.count(op.type()) > 0;
}
}  // namespace

DagGraph BuildDependencyGraph(const caffe2::NetDef& net) {
  const int n = net.op_size();
  std::vector<std::set<int>> parents(n);
  std::map<std::string, int> last_writer;
  std::map<std::string, std::vector<int>> readers_since_write;
  std::map<std::string, int> last_communicator;  // by common world blob
  for (int i = 0; i < n; ++i) {
    const auto& op = net.op(i);
    if (IsCommunicatorOp(op)) {
      auto c = last_communicator.find(op.input(0));
      if (c != last_communicator.end()) parents[i].insert(c->second);
      last_communicator[op.input(0)] = i;
    }
    std::vector<std::string> reads(op.input().begin(), op.input().end());
    reads.insert(reads.end(), op.control_input().begin(), op.control_input().end());
    for (const auto& b : reads) {
      auto w = last_writer.find(b);
      if (w != last_writer.end()) parents[i].insert(w->second);  // read after write
    }
    for (const auto& b : op.output()) {
      auto w = last_writer.find(b);
      if (w != last_writer.end()) parents[i].insert(w->second);  // write after write
      for (int r : readers_since_write[b]) parents[i].insert(r);  // write after read
    }
    // Record this op's accesses only after its own edges, so an in-place op never depends on itself.
    for (const auto& b : reads) readers_since_write[b].push_back(i);
    for (const auto& b : op.output()) {
      last_writer[b] = i;
      readers_since_write[b].clear();
    }
  }
  DagGraph g;
  g.parents.resize(n);
  g.children.resize(n);
  for (int i = 0; i < n; ++i) {
    parents[i].erase(i);
    g.parents[i].assign(parents[i].begin(), parents[i].end());
    for (int p : parents[i]) g.children[p].push_back(i);  // i ascending keeps children sorted
    if (parents[i].empty()) g.roots.push_back(i);
  }
  return g;
}

}  // namespace hetnet
