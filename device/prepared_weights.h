// Weights prepared once for a CPU kernel (reordered into oneDNN's layout, packed into GEMM panels),
// shared by every operator instance that reads the same version of the same weight tensor.
//
// Versions. A prepared form is kept while the tensor's (storage id, write generation) — see
// Tensor::write_generation — its data pointer and shape are unchanged: an O(1) check per run.
// Storage owned elsewhere (external_storage(), SetExternalData) can be written behind Tensor's back,
// so for it the version is a 64-bit content checksum computed on each run instead (ContentHash: one
// streaming read, adds only; it detects every change of a single 8-byte word for certain, a change
// of several words is missed only if both the sum and the position-weighted sum cancel).
// Sharing. A process-wide cache per kind of form holds weak references keyed by that version and
// the form's layout, so the operator instances of every child workspace of a Predictor (one
// predict-net instance each, all reading the parent's weight storage) hold one copy, prepared once.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "core/prepared_memory.h"
#include "core/tensor.h"

namespace hetnet {

// Fletcher-style checksum of nbytes at p (sum of the 8-byte words and sum of the running sums,
// each mod 2^64); see the header comment for what it guarantees.
struct Checksum {
  uint64_t sum = 0, weighted = 0;
  bool operator==(const Checksum& o) const { return sum == o.sum && weighted == o.weighted; }
};
Checksum ContentHash(const void* p, size_t nbytes);

// What one version of a weight's contents is identified by.
struct WeightVersion {
  uint64_t storage_id = 0;
  uint64_t version = 0, version2 = 0;  // (write generation, 0), or the checksum of external storage
  bool external = false;
  const void* data = nullptr;
  std::vector<int64_t> shape;
  static WeightVersion Of(const Tensor& w);
  // Whether w's contents are still this version (no allocation; a checksum for external storage).
  bool Describes(const Tensor& w) const;
  bool operator==(const WeightVersion& o) const {
    return storage_id == o.storage_id && version == o.version && version2 == o.version2 && external == o.external &&
           data == o.data && shape == o.shape;
  }
};

// Forms of weights (Form) made by one kind of preparation, each for one WeightVersion and one
// Layout (anything with ==). Weak: a form lives as long as some operator holds it; entries of
// older versions expire when their last user moves on and are dropped when met or swept.
template <class Layout, class Form>
class PreparedWeightCache {
 public:
  using Make = std::function<std::shared_ptr<const Form>()>;
  // bytes(form): the memory a form holds, reported beside its weight blob by the memory report
  // (core/prepared_memory.h); without it the cache's forms are not reported.
  using Bytes = std::function<int64_t(const Form&)>;
  explicit PreparedWeightCache(Bytes bytes = nullptr) {
    if (!bytes) return;
    source_ = RegisterPreparedCopies([this, bytes](std::map<uint64_t, int64_t>* out) {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& [storage_id, entry] : entries_)
        if (std::shared_ptr<const Form> f = entry.form.lock()) (*out)[storage_id] += bytes(*f);
    });
  }
  ~PreparedWeightCache() {
    if (source_ >= 0) UnregisterPreparedCopies(source_);
  }
  // The cached form of (v, layout), or make()'s. Made under the lock: two instances that miss at
  // once prepare once (preparation is rare: at net creation or the first run, and after a write).
  std::shared_ptr<const Form> GetOrPrepare(const WeightVersion& v, const Layout& layout, const Make& make) {
    std::lock_guard<std::mutex> lock(mu_);
    auto range = entries_.equal_range(v.storage_id);
    for (auto it = range.first; it != range.second;) {
      std::shared_ptr<const Form> f = it->second.form.lock();
      if (!f) {
        it = entries_.erase(it);
        continue;
      }
      if (it->second.version == v && it->second.layout == layout) return f;
      ++it;
    }
    std::shared_ptr<const Form> f = make();
    ++preparations_;
    if (++inserts_since_sweep_ > entries_.size()) Sweep();
    entries_.emplace(v.storage_id, Entry{v, layout, f});
    return f;
  }
  // Test hooks: forms made so far, and forms alive now.
  int64_t Preparations() {
    std::lock_guard<std::mutex> lock(mu_);
    return preparations_;
  }
  size_t Live() {
    std::lock_guard<std::mutex> lock(mu_);
    Sweep();
    return entries_.size();
  }

 private:
  struct Entry {
    WeightVersion version;
    Layout layout;
    std::weak_ptr<const Form> form;
  };
  void Sweep() {
    for (auto it = entries_.begin(); it != entries_.end();) it = it->second.form.expired() ? entries_.erase(it) : std::next(it);
    inserts_since_sweep_ = 0;
  }
  std::mutex mu_;
  int source_ = -1;  // RegisterPreparedCopies' id
  std::multimap<uint64_t, Entry> entries_;
  size_t inserts_since_sweep_ = 0;
  int64_t preparations_ = 0;
};

// One operator's view of its weight in one prepared form: re-checked per run in O(1) (a checksum
// for external storage), taken from the shared cache (or prepared) when the weight changed.
template <class Layout, class Form>
class PreparedWeight {
 public:
  const Form& Get(const Tensor& w, const Layout& layout, PreparedWeightCache<Layout, Form>& cache,
                  const typename PreparedWeightCache<Layout, Form>::Make& make) {
    if (form_ && layout == layout_ && version_.Describes(w)) return *form_;
    form_.reset();  // an older version need not stay alive while the new one is made
    version_ = WeightVersion::Of(w);
    form_ = cache.GetOrPrepare(version_, layout, make);
    layout_ = layout;
    return *form_;
  }
  void Reset() { form_.reset(); }

 private:
  WeightVersion version_;
  Layout layout_{};
  std::shared_ptr<const Form> form_;
};

}  // namespace hetnet
