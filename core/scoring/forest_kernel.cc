#include "core/scoring/forest_kernel.h"

#include <cstddef>
#include <cstdint>

namespace plrank::internal {

void PadWithLastDocument(const KernelBatch& batch, size_t last,
                         size_t padded_end) {
  const uint32_t* from = batch.doc_rows(last);
  for (size_t i = last + 1; i < padded_end; ++i) {
    uint32_t* to = batch.doc_rows(i);
    for (size_t s = 0; s < batch.num_slots; ++s) {
      to[s * kLanes] = from[s * kLanes];
    }
  }
}

}  // namespace plrank::internal
