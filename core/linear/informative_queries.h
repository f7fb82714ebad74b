#ifndef PLRANK_CORE_LINEAR_INFORMATIVE_QUERIES_H_
#define PLRANK_CORE_LINEAR_INFORMATIVE_QUERIES_H_

#include <algorithm>
#include <cstddef>
#include <functional>

#include "core/data/dataset.h"

namespace plrank {

// True when query q has at least two different labels: only such queries
// carry ranking information (NDCG is flat and a Plackett-Luce likelihood is
// label-free on the others), so the linear rankers skip the rest.
inline bool QueryHasDistinctLabels(const Dataset& data, size_t q) {
  const auto first = data.labels.begin() + data.query_begin(q);
  const auto last = data.labels.begin() + data.query_end(q);
  return first != last &&
         std::adjacent_find(first, last, std::not_equal_to<>()) != last;
}

}  // namespace plrank

#endif  // PLRANK_CORE_LINEAR_INFORMATIVE_QUERIES_H_
