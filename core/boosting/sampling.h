#ifndef PLRANK_CORE_BOOSTING_SAMPLING_H_
#define PLRANK_CORE_BOOSTING_SAMPLING_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/data/dataset.h"

namespace plrank {

// SplitMix64: tiny, fast, and (unlike std:: and absl distributions) gives the
// same stream on every platform and library version, so a seed names a model.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n); n > 0. The modulo bias (< n / 2^64) is irrelevant here.
  uint64_t Below(uint64_t n) { return Next() % n; }

 private:
  uint64_t state_;
};

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
