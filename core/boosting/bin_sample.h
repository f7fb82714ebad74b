#ifndef PLRANK_CORE_BOOSTING_BIN_SAMPLE_H_
#define PLRANK_CORE_BOOSTING_BIN_SAMPLE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/boosting/bin_mapper.h"
#include "core/boosting/reducer.h"
#include "core/data/dataset.h"

namespace plrank {

// Bin boundaries come from a sample of at most about this many documents.
inline constexpr size_t kMaxBinningSample = 200000;

// Whether document `index_in_query` of query `query_id` is in the binning
// sample when the whole training set has `total_documents`: every document
// when total_documents <= max_sample, else those whose hash of (query id,
// index in query) falls below max_sample / total_documents of the hash
// range. The answer depends on nothing else, so the sample is the same
// whether the set is read whole, by byte ranges or from pre-sharded files,
// and whatever the rank count.
bool InBinningSample(std::string_view query_id, uint32_t index_in_query,
                     uint64_t total_documents, size_t max_sample);

// One BinMapper per column of `shard`, fitted on rank 0 from the sample
// (InBinningSample) of every rank's documents, gathered feature block by
// feature block (so no rank holds more than a block of the sample at once),
// and broadcast: every rank gets the same mappers, the ones single-process
// training on the whole set gets. Collective; every rank must have the
// same num_features. Single-process: `reducer` is an IdentityReducer.
std::vector<BinMapper> FitBinMappers(const Dataset& shard, int32_t max_bin,
                                     size_t max_sample, Reducer& reducer,
                                     int32_t num_threads);

}  // namespace plrank

#endif  // PLRANK_CORE_BOOSTING_BIN_SAMPLE_H_
