#ifndef PLRANK_CORE_BOOSTING_SAMPLING_H_
#define PLRANK_CORE_BOOSTING_SAMPLING_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/data/dataset.h"
#include "core/data/random.h"

namespace plrank {

// A seed for one random stream, e.g. (config seed, "bagging", draw number).
uint64_t DeriveSeed(uint64_t seed, uint64_t stream, uint64_t index);

// Exactly max(1, round(fraction * num_queries)) queries flagged 1, chosen
// uniformly by a partial Fisher-Yates shuffle from DeriveSeed(seed, 1, draw).
std::vector<uint8_t> DrawQueryBag(size_t num_queries, double fraction,
                                  uint64_t seed, uint64_t draw);

// The documents of the flagged queries, ascending.
void DocumentsOfBag(const Dataset& data, const std::vector<uint8_t>& query_in_bag,
                    std::vector<uint32_t>* documents);

// max(1, round(fraction * num_features)) feature indices out of
// [0, num_features), ascending; all of them when fraction >= 1.
std::vector<int32_t> DrawFeatureSubset(int32_t num_features, double fraction,
                                       uint64_t seed, uint64_t draw);

}  // namespace plrank

#endif  // PLRANK_CORE_BOOSTING_SAMPLING_H_
