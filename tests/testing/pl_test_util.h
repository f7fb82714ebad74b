#ifndef PLRANK_TESTS_TESTING_PL_TEST_UTIL_H_
#define PLRANK_TESTS_TESTING_PL_TEST_UTIL_H_

// Small helpers for the Plackett-Luce tests: random ranking data and a
// brute-force log-likelihood written straight from the definition.

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/data/dataset.h"
#include "core/objectives/plackett_luce/contexts.h"
#include "core/data/random.h"

namespace plrank::testing {

inline Dataset MakeDataset(const std::vector<std::vector<int32_t>>& labels) {
  Dataset data;
  data.query_offsets.push_back(0);
  for (const auto& query : labels) {
    data.labels.insert(data.labels.end(), query.begin(), query.end());
    data.query_offsets.push_back(static_cast<uint32_t>(data.labels.size()));
    data.query_ids.push_back(std::to_string(data.query_ids.size()));
  }
  return data;
}

// Queries of random size in [min_size, max_size], labels in [0, max_label]
// (few grades, so many ties).
inline Dataset RandomDataset(uint64_t seed, int num_queries, int min_size,
                             int max_size, int max_label) {
  SplitMix64 rng(seed);
  std::vector<std::vector<int32_t>> labels(num_queries);
  for (auto& query : labels) {
    const int n = min_size + static_cast<int>(rng.BelowUnbiased(max_size - min_size + 1));
    for (int i = 0; i < n; ++i) {
      query.push_back(static_cast<int32_t>(rng.BelowUnbiased(max_label + 1)));
    }
  }
  return MakeDataset(labels);
}

inline std::vector<double> RandomScores(uint64_t seed, size_t n, double scale) {
  SplitMix64 rng(seed);
  std::vector<double> scores(n);
  for (double& s : scores) {
    s = scale * (2.0 * static_cast<double>(rng.Next() >> 11) * 0x1.0p-53 - 1.0);
  }
  return scores;
}

// Mean over permutations of log p(pi | s), summed over the queries with
// include[q] (all when empty), in long double, one context at a time: no
// sharing, no weights — an independent check of PlContexts' dedup.
inline long double BruteLogLikelihood(const PlContexts& contexts,
                                      const std::vector<double>& scores,
                                      const std::vector<uint8_t>& include = {}) {
  long double total = 0.0L;
  const auto queries = contexts.queries();
  for (size_t q = 0; q < queries.size(); ++q) {
    if (!include.empty() && !include[q]) continue;
    const PlQuery& query = queries[q];
    const double* s = scores.data() + query.begin;
    for (int32_t p = 0; p < contexts.num_permutations(); ++p) {
      std::vector<uint8_t> removed(query.size, 0);
      const uint32_t* order = contexts.chosen(query, p);
      for (uint32_t j = 0; j < query.depth; ++j) {
        long double normalizer = 0.0L;
        for (uint32_t d = 0; d < query.size; ++d) {
          if (!removed[d]) normalizer += std::exp(static_cast<long double>(s[d]));
        }
        total += (s[order[j]] - std::log(normalizer)) /
                 static_cast<long double>(contexts.num_permutations());
        removed[order[j]] = 1;
      }
    }
  }
  return total;
}

}  // namespace plrank::testing

#endif  // PLRANK_TESTS_TESTING_PL_TEST_UTIL_H_
