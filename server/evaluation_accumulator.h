#ifndef PLRANK_SERVER_EVALUATION_ACCUMULATOR_H_
#define PLRANK_SERVER_EVALUATION_ACCUMULATOR_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/data/dataset.h"
#include "core/metrics/ranking_metrics.h"
#include "plrank/v1/ranker.pb.h"
#include "server/document_scoring.h"
#include "server/lifecycle/servable_version.h"
#include "server/request_limits.h"

namespace plrank::server {

// Scores labelled queries as they arrive (one Evaluate message or the
// messages of an EvaluateStream) and computes the metrics at the end, with
// exactly the semantics of plrank-eval (core Evaluate: ERR's max grade is the
// largest label of all queries, empty-query convention per
// skip_empty_queries). Keeps one score and label per document.
class EvaluationAccumulator {
 public:
  // Metric list and options from the (first) request: ndcg@k for every
  // ndcg_at entry (default 1, 3, 5, 10; each k >= 1; at most
  // limits.max_ndcg_cutoffs of them, else RESOURCE_EXHAUSTED), then err and
  // map.
  static absl::StatusOr<EvaluationAccumulator> Create(
      const v1::EvaluateRequest& first, const RequestLimits& limits);

  // Validates (query non-empty, one label in [0, kMaxLabel] per document,
  // documents matching the model, limits) and scores the queries of
  // `request`. A bad label is INVALID_ARGUMENT naming query and document.
  // With per_query, RESOURCE_EXHAUSTED as soon as the response estimate
  // passes limits.max_response_bytes.
  absl::Status AddQueries(const ServableVersion& version,
                          const v1::EvaluateRequest& request,
                          InterruptCheck interrupted);

  uint64_t num_documents() const { return data_.labels.size(); }

  // INVALID_ARGUMENT when no query was added, or when skip_empty_queries
  // leaves no query (no label above 0). Every metric value is finite.
  absl::Status Finish(const ServableVersion& version,
                      v1::EvaluateResponse* response) const;

 private:
  EvaluationAccumulator() = default;

  RequestLimits limits_;
  std::vector<MetricSpec> specs_;
  MetricOptions options_;
  bool per_query_ = false;
  Dataset data_;  // labels, query offsets and ids only (no features)
  std::vector<double> scores_;
  // per_query: bytes of one query's metric values, and of the response
  // so far (query ids included), checked against max_response_bytes.
  uint64_t per_query_metric_bytes_ = 0;
  uint64_t estimated_response_bytes_ = 0;
};

}  // namespace plrank::server

#endif  // PLRANK_SERVER_EVALUATION_ACCUMULATOR_H_
