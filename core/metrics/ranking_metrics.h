#ifndef PLRANK_CORE_METRICS_RANKING_METRICS_H_
#define PLRANK_CORE_METRICS_RANKING_METRICS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/data/dataset.h"

namespace plrank {

// Ranking convention shared by every metric below: RanksBefore
// (core/data/ranking_order.h): documents are ranked by descending score;
// equal scores are ordered by ascending label (the worst document first, so a
// constant scorer cannot look good), then by document index, which makes the
// order total and reproducible. NaN scores rank last (ordered among
// themselves by label, then index). Gains are 2^label - 1.

// What a metric is for a query with no relevant document (every label 0,
// so ideal DCG is 0). Applies to NDCG and MAP; for ERR, whose value for such
// a query is 0 under any ranking, only kSkip changes anything.
enum class EmptyQueryNdcg {
  kOne,   // NDCG = AP = 1 (LightGBM's convention; our default); ERR = 0
  kZero,  // NDCG = AP = ERR = 0
  kSkip,  // the query is left out of the mean (its value is NaN)
};

struct MetricOptions {
  EmptyQueryNdcg empty_query = EmptyQueryNdcg::kOne;
  // ERR's R_i = (2^r - 1) / 2^max_grade; <= 0 means the dataset's max label.
  int32_t max_grade = 0;
};

// A metric spec such as "ndcg@10", "err", "map", "err@5".
struct MetricSpec {
  enum class Kind { kNdcg, kErr, kMap } kind = Kind::kNdcg;
  int32_t k = 0;  // 0 = whole list
  // "ndcg@10", "err", "map@5": the text ParseMetricSpec reads back.
  std::string Name() const;
  bool operator==(const MetricSpec&) const = default;
};
// Accepts ndcg, err, map, each optionally followed by @k with k >= 1
// (case-insensitive, surrounding whitespace ignored). "ndcg" = whole list.
absl::StatusOr<MetricSpec> ParseMetricSpec(std::string_view text);

// Single-query metrics over documents [0, n) ranked as described above.
// k = 0 or k >= n means the whole list. scores and labels have equal size.
// They reuse per-thread scratch buffers: no heap allocation once the buffers
// have grown to the largest query seen by the thread.

// NDCG@k; ideal DCG@k from the labels sorted descending. For a query with no
// relevant document returns 1, 0 or NaN per `empty`. `counted` (optional) is
// set to false exactly when the query is to be left out of the mean.
double NdcgAtK(absl::Span<const double> scores, absl::Span<const int32_t> labels,
               int32_t k, EmptyQueryNdcg empty, bool* counted = nullptr);

// ERR@k (Chapelle et al. 2009): R_i = (2^{r_i} - 1) / 2^max_grade,
// ERR = sum_{i<=k} (1/i) R_i prod_{j<i} (1 - R_j). Labels above max_grade are
// clamped to it so that R stays in [0, 1). max_grade <= 0 means this query's
// largest label. A query without relevant document has ERR 0.
double ErrAtK(absl::Span<const double> scores, absl::Span<const int32_t> labels,
              int32_t k, int32_t max_grade);

// Average precision, relevant = label > 0: the mean over relevant documents
// of precision at their rank. A query without relevant document follows
// `empty` (kOne -> 1, kZero -> 0, kSkip -> NaN), like NDCG.
double AveragePrecision(absl::Span<const double> scores,
                        absl::Span<const int32_t> labels,
                        EmptyQueryNdcg empty = EmptyQueryNdcg::kOne);
// AP@k: sum of precision@i over relevant documents in the top k, divided by
// min(number of relevant documents, k) (LightGBM's map@k). k = 0: whole list.
double AveragePrecisionAtK(absl::Span<const double> scores,
                           absl::Span<const int32_t> labels, int32_t k,
                           EmptyQueryNdcg empty = EmptyQueryNdcg::kOne);

// Per-query values of `spec` over a dataset (scores one per document).
// Queries excluded by EmptyQueryNdcg::kSkip get NaN. Every value is NaN when
// scores.size() != data.num_documents(). Per-query results are independent,
// so the output does not depend on the thread count.
std::vector<double> PerQueryMetric(const Dataset& data,
                                   absl::Span<const double> scores,
                                   const MetricSpec& spec,
                                   const MetricOptions& options);

// Mean over non-NaN entries (NaN when there is none).
double MeanIgnoringNan(absl::Span<const double> values);

// Paired two-tailed t-test over queries (Student t with n - 1 degrees of
// freedom on the differences a[i] - b[i]); pairs with a non-finite difference
// (e.g. NaN from kSkip) are dropped. a and b should have equal size; extra
// entries of the longer one are ignored. Returns 1 with fewer than 2 pairs;
// when all differences are equal, 1 if they are 0 and 0 otherwise.
double PairedTTestPValue(absl::Span<const double> a, absl::Span<const double> b);

}  // namespace plrank

#endif  // PLRANK_CORE_METRICS_RANKING_METRICS_H_
