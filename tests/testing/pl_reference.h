#ifndef PLRANK_TESTS_TESTING_PL_REFERENCE_H_
#define PLRANK_TESTS_TESTING_PL_REFERENCE_H_

// A long-double reference for the Plackett-Luce per-document derivatives,
// written from the definition one context at a time, for precision tests.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/objectives/plackett_luce/contexts.h"

namespace plrank::testing {

struct Reference {
  std::vector<long double> first, second;  // L'(d), sum p(1-p)
  // Per document: sum over its contexts of |I(picked) - p|, the terms L'(d)
  // adds up. An accurate method's error is rounding relative to these (they
  // may cancel across permutations), never relative to a context total.
  std::vector<long double> scale;
};

// Straight from the definition, one context at a time, with 1 - p formed as
// (sum of the other documents) / S so that nothing cancels.
inline Reference BruteDerivatives(const PlContexts& contexts,
                           const std::vector<double>& scores) {
  Reference ref{std::vector<long double>(scores.size(), 0.0L),
                std::vector<long double>(scores.size(), 0.0L),
                std::vector<long double>(scores.size(), 0.0L)};
  const long double inv_m = 1.0L / contexts.num_permutations();
  for (const PlQuery& query : contexts.queries()) {
    const double* s = scores.data() + query.begin;
    double top = s[0];
    for (uint32_t d = 1; d < query.size; ++d) top = std::max(top, s[d]);
    std::vector<long double> e(query.size);
    for (uint32_t d = 0; d < query.size; ++d) {
      e[d] = std::exp(static_cast<long double>(s[d]) - top);
    }
    for (int32_t p = 0; p < contexts.num_permutations(); ++p) {
      std::vector<uint8_t> removed(query.size, 0);
      const uint32_t* order = contexts.chosen(query, p);
      for (uint32_t j = 0; j < query.depth; ++j) {
        long double total = 0.0L;
        for (uint32_t d = 0; d < query.size; ++d) {
          if (!removed[d]) total += e[d];
        }
        for (uint32_t d = 0; d < query.size; ++d) {
          if (removed[d]) continue;
          long double others = 0.0L;
          for (uint32_t o = 0; o < query.size; ++o) {
            if (!removed[o] && o != d) others += e[o];
          }
          const long double prob = e[d] / total, rest = others / total;
          const size_t g = query.begin + d;
          ref.first[g] += inv_m * (d == order[j] ? rest : -prob);
          ref.second[g] += inv_m * prob * rest;
          ref.scale[g] += inv_m * (d == order[j] ? rest : prob);
        }
        removed[order[j]] = 1;
      }
    }
  }
  return ref;
}

}  // namespace plrank::testing

#endif  // PLRANK_TESTS_TESTING_PL_REFERENCE_H_
