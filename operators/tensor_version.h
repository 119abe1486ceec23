// What a tensor held when an op last derived something from it (its storage, write generation and
// shape), so that ops preparing weights (FoldBatchNormWeights, CastConstant) redo the work only when
// an input may have changed. Storage owned elsewhere (external_storage) is never taken as unchanged:
// its writes are not counted.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace hetnet {

struct TensorVersion {
  uint64_t storage = 0, generation = 0;
  std::vector<int64_t> shape;

  static TensorVersion Of(const Tensor& t) { return {t.storage_id(), t.write_generation(), t.shape()}; }
  bool Same(const TensorVersion& b) const {
    return storage != 0 && storage == b.storage && generation == b.generation && shape == b.shape;
  }
  // Whether t still holds what this version recorded.
  bool Holds(const Tensor& t) const { return !t.external_storage() && Same(Of(t)); }
};

}  // namespace hetnet
