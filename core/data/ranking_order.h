#ifndef PLRANK_CORE_DATA_RANKING_ORDER_H_
#define PLRANK_CORE_DATA_RANKING_ORDER_H_

#include <cmath>
#include <cstdint>

namespace plrank {

// The one ranking order of the project (metrics, coordinate ascent's
// incremental NDCG, LambdaMART's current ranking): true when document a
// ranks before document b. Descending score; equal scores by ascending label
// (the worst document first, so a constant scorer cannot look good), then by
// ascending index, which makes the order total and reproducible. NaN scores
// rank last, ordered among themselves by label, then index.
inline bool RanksBefore(double score_a, int32_t label_a, uint32_t index_a,
                        double score_b, int32_t label_b, uint32_t index_b) {
  const bool nan_a = std::isnan(score_a);
  const bool nan_b = std::isnan(score_b);
  if (nan_a != nan_b) return nan_b;
  if (!nan_a && score_a != score_b) return score_a > score_b;
  if (label_a != label_b) return label_a < label_b;
  return index_a < index_b;
}

}  // namespace plrank

#endif  // PLRANK_CORE_DATA_RANKING_ORDER_H_
