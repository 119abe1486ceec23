// Memory that kernels hold in prepared copies of weights (packed GEMM panels, oneDNN's reordered
// filters: device/prepared_weights.h), for the memory report: each copy sits beside the weight blob
// it was made from, which the report's blob list counts only once. core/ knows no cache: each cache
// registers a source that adds its live copies' bytes by their source tensor's storage id.
#pragma once

#include <cstdint>
#include <functional>
#include <map>

namespace hetnet {

using PreparedCopiesSource = std::function<void(std::map<uint64_t, int64_t>* bytes_by_storage)>;

// Returns an id for UnregisterPreparedCopies (a source must not outlive what it reads).
int RegisterPreparedCopies(PreparedCopiesSource source);
void UnregisterPreparedCopies(int id);

// Bytes of the live prepared copies, by the storage id of the tensor each was made from, summed
// over every source.
std::map<uint64_t, int64_t> PreparedBytesByStorage();

}  // namespace hetnet
