#include "device/dnnl_util.h"

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>

namespace hetnet {
namespace dnnl_util {

namespace {
std::atomic<int64_t> g_preparations{0};
}  // namespace

// What a prepared weight was made from: one version of one storage, read with one shape and one
// user layout, reordered into one wanted layout.
struct WeightVersion {
  uint64_t storage_id = 0;
  uint64_t version = 0, version2 = 0;  // (write generation, 0), or the checksum of external storage
  bool external = false;
  const void* data = nullptr;
  std::vector<int64_t> shape;
  dnnl::memory::desc user, want;
  bool operator==(const WeightVersion& o) const {
    return storage_id == o.storage_id && version == o.version && version2 == o.version2 && external == o.external &&
           data == o.data && shape == o.shape && user == o.user && want == o.want;
  }
};

struct PreparedMemory {
  WeightVersion from;
  dnnl::memory mem;
};

namespace {

// Prepared weights by storage id; weak, so a filter lives as long as some operator uses it. Entries
// of older versions expire when their last user moves on and are dropped when met or swept.
class PreparedCache {
 public:
  std::shared_ptr<const PreparedMemory> GetOrPrepare(const WeightVersion& v) {
    // Preparing under the lock: two instances that miss at once reorder once (preparation is rare:
    // at the first run and after a write).
    std::lock_guard<std::mutex> lock(mu_);
    auto range = entries_.equal_range(v.storage_id);
    for (auto it = range.first; it != range.second;) {
      std::shared_ptr<const PreparedMemory> p = it->second.lock();
      if (!p) {
        it = entries_.erase(it);
        continue;
      }
      if (p->from == v) return p;
      ++it;
    }
    auto p = std::make_shared<PreparedMemory>();
    p->from = v;
    p->mem = dnnl::memory(v.want, CpuEngine());
    dnnl::memory src = Wrap(v.user, v.data);
    dnnl::stream& s = ThreadStream();
    Reorder(v.user, v.want).execute(s, src, p->mem);
    s.wait();
    g_preparations.fetch_add(1);
    if (++inserts_since_sweep_ > entries_.size()) Sweep();
    entries_.emplace(v.storage_id, p);
    return p;
  }

  size_t Live() {
    std::lock_guard<std::mutex> lock(mu_);
    Sweep();
    return entries_.size();
  }

 private:
  void Sweep() {
    for (auto it = entries_.begin(); it != entries_.end();) it = it->second.expired() ? entries_.erase(it) : std::next(it);
    inserts_since_sweep_ = 0;
  }

  std::mutex mu_;
  std::multimap<uint64_t, std::weak_ptr<const PreparedMemory>> entries_;
  size_t inserts_since_sweep_ = 0;
};

PreparedCache& Cache() {
  static auto* c = new PreparedCache;  // never destroyed: operators may outlive static destruction order
  return *c;
}

}  // namespace

dnnl::engine& CpuEngine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

dnnl::stream& ThreadStream() {
  thread_local dnnl::stream s(CpuEngine());
  return s;
}

dnnl::memory::desc PlainDesc(const std::vector<int64_t>& dims) {
  dnnl::memory::dims d(dims.begin(), dims.end()), strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * d[i + 1];
  return dnnl::memory::desc(d, dnnl::memory::data_type::f32, strides);
}

dnnl::memory Wrap(const dnnl::memory::desc& md, const void* data) {
  return dnnl::memory(md, CpuEngine(), const_cast<void*>(data));
}

dnnl::primitive_attr UserScratchpad() {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return a;
}

dnnl::reorder Reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  // Plain-to-blocked float reorders need no scratchpad; the library's is fine for the rare case.
  return dnnl::reorder(dnnl::reorder::primitive_desc(CpuEngine(), from, CpuEngine(), to));
}

Checksum ContentHash(const void* p, size_t nbytes) {
  // Eight lanes of adds (one AVX-512 register each for the sums and the running sums), so the
  // loop runs at memory speed; the lanes are combined with distinct odd weights at the end.
  const unsigned char* b = static_cast<const unsigned char*>(p);
  const size_t words = nbytes / 8;
  uint64_t s[8] = {0, 0, 0, 0, 0, 0, 0, 0}, r[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= words; i += 8) {
    uint64_t w[8];
    std::memcpy(w, b + 8 * i, sizeof(w));
    for (int j = 0; j < 8; ++j) {
      s[j] += w[j];
      r[j] += s[j];
    }
  }
  Checksum c;
  for (; i < words; ++i) {
    uint64_t w;
    std::memcpy(&w, b + 8 * i, 8);
    c.sum += w;
    c.weighted += c.sum * 17;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, b + 8 * words, nbytes - 8 * words);
  c.sum += tail;
  for (int j = 0; j < 8; ++j) {
    c.sum += s[j];
    c.weighted += r[j] * (2 * j + 1);
  }
  c.weighted ^= static_cast<uint64_t>(nbytes);
  return c;
}

int64_t WeightPreparations() { return g_preparations.load(); }
size_t LivePreparedWeights() { return Cache().Live(); }

dnnl::primitive_attr Attributes(bool relu) {
  dnnl::primitive_attr a = UserScratchpad();
  if (relu) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    a.set_post_ops(ops);
  }
  return a;
}

dnnl::memory PreparedWeight::Get(const Tensor& W, const dnnl::memory::desc& user, const dnnl::memory::desc& want) {
  const void* data = W.raw_data();
  if (want == user) {  // the user's layout: read the tensor itself, nothing to keep fresh
    prepared_.reset();
    return Wrap(user, data);
  }
  uint64_t version = W.write_generation(), version2 = 0;
  const bool external = W.external_storage();
  if (external) {
    const Checksum c = ContentHash(data, W.nbytes());
    version = c.sum;
    version2 = c.weighted;
  }
  if (prepared_ && W.storage_id() == storage_id_ && version == version_ && version2 == version2_ && data == data_ &&
      W.shape() == shape_ && want == want_ && user == user_)
    return prepared_->mem;
  WeightVersion v;
  v.storage_id = W.storage_id();
  v.version = version;
  v.version2 = version2;
  v.external = external;
  v.data = data;
  v.shape = W.shape();
  v.user = user;
  v.want = want;
  prepared_.reset();  // an older version need not stay alive while the new one is made
  prepared_ = Cache().GetOrPrepare(v);
  storage_id_ = v.storage_id;
  version_ = version;
  version2_ = version2;
  data_ = data;
  shape_ = v.shape;
  user_ = user;
  want_ = want;
  return prepared_->mem;
}

}  // namespace dnnl_util
}  // namespace hetnet
