#include "core/boosting/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/objectives/objective.h"

namespace plrank {
namespace {

// Indices [0, n) with the first k of them a uniform sample (partial shuffle).
std::vector<uint32_t> PartialShuffle(size_t n, size_t k, uint64_t seed) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  SplitMix64 rng(seed);
  for (size_t i = 0; i < k && i + 1 < n; ++i) {
    const size_t j = i + rng.BelowModulo(n - i);
    std::swap(order[i], order[j]);
  }
  order.resize(k);
  return order;
}

size_t SampleSize(size_t n, double fraction) {
  const double k = std::round(fraction * static_cast<double>(n));
  return std::clamp<size_t>(static_cast<size_t>(std::max(k, 1.0)), 1, n);
}

}  // namespace

uint64_t DeriveSeed(uint64_t seed, uint64_t stream, uint64_t index) {
  SplitMix64 a(seed ^ (stream * 0xd1b54a32d192ed03ULL));
  SplitMix64 b(a.Next() ^ (index * 0x8cb92ba72f3d8dd7ULL));
  return b.Next();
}

std::vector<uint8_t> DrawQueryBag(size_t num_queries, double fraction,
                                  uint64_t seed, uint64_t draw) {
  std::vector<uint8_t> in_bag(num_queries, 1);
  if (num_queries == 0 || fraction >= 1.0) return in_bag;
  std::fill(in_bag.begin(), in_bag.end(), 0);
  const size_t k = SampleSize(num_queries, fraction);
  for (uint32_t q : PartialShuffle(num_queries, k, DeriveSeed(seed, 1, draw))) {
    in_bag[q] = 1;
  }
  return in_bag;
}

void DocumentsOfBag(const Dataset& data, const std::vector<uint8_t>& query_in_bag,
                    std::vector<uint32_t>* documents) {
  documents->clear();
  for (size_t q = 0; q < data.num_queries(); ++q) {
    if (!QueryInBag(query_in_bag, q)) continue;
    for (uint32_t i = data.query_begin(q); i < data.query_end(q); ++i) {
      documents->push_back(i);
    }
  }
}

std::vector<int32_t> DrawFeatureSubset(int32_t num_features, double fraction,
                                       uint64_t seed, uint64_t draw) {
  std::vector<int32_t> features;
  if (num_features <= 0) return features;
  if (fraction >= 1.0) {
    features.resize(num_features);
    std::iota(features.begin(), features.end(), 0);
    return features;
  }
  const size_t k = SampleSize(num_features, fraction);
  for (uint32_t f : PartialShuffle(num_features, k, DeriveSeed(seed, 2, draw))) {
    features.push_back(static_cast<int32_t>(f));
  }
  std::sort(features.begin(), features.end());
  return features;
}

}  // namespace plrank
