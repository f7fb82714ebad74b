#ifndef PLRANK_SERVER_RANKING_COMPARISON_H_
#define PLRANK_SERVER_RANKING_COMPARISON_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/types/span.h"

namespace plrank::server {

// How closely two rankings of the same documents agree. Used by shadow
// scoring to compare the serving version with the shadow version.
struct RankingComparison {
  // Kendall tau-b of the two score vectors (ties in either ranking are
  // accounted for, as in scipy.stats.kendalltau); nullopt when undefined:
  // fewer than 2 documents, or every document tied in one of the rankings.
  std::optional<double> kendall_tau;
  // Both rankings put the same document first.
  bool top1_agree = true;
  // |top-k of a ∩ top-k of b| / k with k = min(10, n); 1 when n = 0.
  double top10_overlap = 1.0;
};

// Documents ranked as Rank ranks them: descending score, NaN last, equal
// scores in request order. Returns the first min(k, n) request indices.
std::vector<uint32_t> TopIndices(absl::Span<const double> scores, size_t k);

// Kendall tau-b between two score vectors (a[i] and b[i] score document i;
// equal sizes), in O(n log n) (Knight's algorithm). NaN counts as the
// lowest score (tied with other NaNs). nullopt as in RankingComparison.
std::optional<double> KendallTauB(absl::Span<const double> a,
                                  absl::Span<const double> b);

// All three measures; `a` and `b` must have the same size.
RankingComparison CompareRankings(absl::Span<const double> a,
                                  absl::Span<const double> b);

}  // namespace plrank::server

#endif  // PLRANK_SERVER_RANKING_COMPARISON_H_
