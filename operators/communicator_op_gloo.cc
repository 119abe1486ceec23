#include "operators/communicator_op_gloo.h"

#include <gloo/allgather.h>

#include <functional>

namespace hetnet {

namespace {
constexpr uint32_t kVerifyTag = 0x7ead;  // apart from the collectives' own tag 0

std::string KeyText(const GlooCallKey& k) {
  return MakeString(k.numel, " element(s) of ", DataTypeName(static_cast<DataType>(k.dtype)), " (root/counts key ",
                    k.extra, ")");
}
}  // namespace

GlooCollectiveOp::GlooCollectiveOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      status_(*this, ws),
      type_hash_(static_cast<int64_t>(std::hash<std::string>()(def.type()) & 0x7fffffff)) {}

void GlooCollectiveOp::VerifyAcrossRanks(GlooCommonWorld& world, const GlooCallKey& key) {
  const int p = world.size();
  verify_buf_.assign(4 * static_cast<size_t>(p), 0);
  int64_t* mine = verify_buf_.data() + 4 * world.rank();
  mine[0] = key.type_hash;
  mine[1] = key.numel;
  mine[2] = key.dtype;
  mine[3] = key.extra;
  gloo::AllgatherOptions opts(world.context());
  opts.setOutput<int64_t>(verify_buf_.data(), verify_buf_.size());
  opts.setTag(kVerifyTag);
  opts.setTimeout(world.timeout());
  gloo::allgather(opts);
  for (int q = 0; q < p; ++q) {
    const int64_t* v = verify_buf_.data() + 4 * q;
    const GlooCallKey theirs{v[0], v[1], v[2], v[3]};
    if (theirs == key) continue;
    verified_ = false;
    if (theirs.type_hash != key.type_hash)
      HN_THROW(kInvalidArgument, type(), " on ", world.Describe(), ": rank ", q,
               " runs another collective at this point; every rank must run the collectives of a common world ",
               "in the same order");
    HN_THROW(kInvalidArgument, type(), " on ", world.Describe(), ": the ranks disagree: this rank has ",
             KeyText(key), ", rank ", q, " has ", KeyText(theirs));
  }
  verified_key_ = key;
  verified_ = true;
}

}  // namespace hetnet
