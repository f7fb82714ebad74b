#ifndef PLRANK_CORE_DATA_DATASET_SLICE_H_
#define PLRANK_CORE_DATA_DATASET_SLICE_H_

#include <cstddef>

#include "core/data/dataset.h"

namespace plrank {

// The queries [first_query, end_query) of `data` as a Dataset of their own
// (offsets rebased to 0, same feature width). Requires
// first_query <= end_query <= data.num_queries().
Dataset SliceQueries(const Dataset& data, size_t first_query,
                     size_t end_query);

}  // namespace plrank

#endif  // PLRANK_CORE_DATA_DATASET_SLICE_H_
