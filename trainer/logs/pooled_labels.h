#ifndef PLRANK_TRAINER_LOGS_POOLED_LABELS_H_
#define PLRANK_TRAINER_LOGS_POOLED_LABELS_H_

// plrank-logs join --pooled_grades: the all-candidates form pooled over the
// logged requests of each query, every candidate labelled with an IPS
// estimate of its relevance instead of "clicked in some request"
// (docs/clicks-serving.md, "Pooled IPS relevance labels").
//
// Under the position-based model a click on d at position j has
// probability theta_j r(d). Over the requests of one query,
//   r_hat(d) = clicks(d) / exposure(d),
//   exposure(d) = sum over the requests of theta(position of d)
// (0 for a request that did not show d; "observed"), or its expectation
// under the logging policy sum over the requests of sum_j mu(d, j) theta_j
// ("expected"). With 100 requests the binary "clicked ever" saturates on
// noise clicks of often-shown irrelevant documents; r_hat keeps them near
// the click noise rate. The label is round(G min(1, r_shrunk)) for a
// clicked document, 0 otherwise, with the shrinkage toward the log's
// overall click rate per examination, prior = sum clicks / sum exposure:
//   r_shrunk = (clicks + a prior) / (exposure + a)
// (a = 0: plain r_hat; a > 0 damps the variance of rarely shown clicked
// documents).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"

namespace plrank::logs {

struct PooledLabelOptions {
  uint32_t grades = 0;  // G in 1..31 (0: no pooled file)
  // theta_1, theta_2, ... in (0, 1]; positions beyond take the last value.
  std::vector<double> curve;
  bool expected_exposure = false;  // mu-weighted instead of observed
  double prior_exposure = 0.0;     // a >= 0
};

// Checks grades (1..31), a non-empty curve in (0, 1] and a >= 0; messages
// name the plrank-logs flags.
absl::Status ValidatePooledLabelOptions(const PooledLabelOptions& options);

// The label of a document with `clicks` clicks and `exposure` (see above):
// 0 without a click, else round(grades * min(1, (clicks + a prior) /
// (exposure + a))); a clicked document with no exposure at all gets
// `grades`.
uint32_t PooledGrade(double clicks, double exposure, double prior, double a,
                     uint32_t grades);

class PooledLabels {
 public:
  explicit PooledLabels(PooledLabelOptions options);

  // Starts a logged request of `query`, the pooling key (the request's
  // query id, or its request id when it has none); its candidates follow.
  void BeginRequest(const std::string& query);
  // One candidate of the current request: `doc` its document id,
  // `features` its LETOR feature tokens (the last request's are written),
  // `position` 1-based (0 = not shown), `marginals` mu(d, j) for j = 1..k
  // at marginals[(j - 1) * stride], `clicked` in this request.
  void Add(const std::string& doc, const std::string& features,
           uint32_t position, const double* marginals, size_t k,
           size_t stride, bool clicked);

  // LETOR text: one query per pooling key in first-seen order (qid 1, 2,
  // ...), each distinct document once in first-seen order, label =
  // PooledGrade, comment "# query=<key> doc=<id> clicks=<c>
  // exposure=<e> requests=<requests of the query>".
  std::string Letor() const;

  size_t queries() const { return queries_.size(); }
  size_t documents() const;
  // sum clicks / sum exposure over every pooled document (0 without
  // exposure).
  double prior() const;

 private:
  struct Doc {
    std::string id;
    std::string features;
    double clicks = 0;
    double exposure = 0;
  };
  struct Query {
    std::string key;
    size_t requests = 0;
    std::vector<Doc> docs;
    absl::flat_hash_map<std::string, size_t> index;
  };
  double Theta(size_t position) const;  // 1-based

  PooledLabelOptions options_;
  std::vector<Query> queries_;
  absl::flat_hash_map<std::string, size_t> query_index_;
  size_t current_ = 0;  // the query of the current request
  double total_clicks_ = 0;
  double total_exposure_ = 0;
};

}  // namespace plrank::logs

#endif  // PLRANK_TRAINER_LOGS_POOLED_LABELS_H_
