#ifndef PLRANK_CORE_LINEAR_INCREMENTAL_NDCG_H_
#define PLRANK_CORE_LINEAR_INCREMENTAL_NDCG_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/data/dataset.h"

namespace plrank {

// Training NDCG@k under line-search steps on one feature, for coordinate
// ascent. It holds the scores and each query's NDCG; a trial step
// scores + step * x_f (NaN -> 0) is evaluated only on the queries where x_f
// varies, because elsewhere it shifts the whole query by a constant. Such
// queries' scores are not shifted on Accept either, so every cached NDCG is
// exactly that of the held scores (which thus differ from the raw linear
// scores by a per-query constant: the same rankings).
//
// Only queries whose labels are not all equal take part; the others have the
// same NDCG under any scores. The ranking and gain conventions are those of
// core/metrics (ties: ascending label, then index; NaN last; gain 2^l - 1).
// Sums run over queries in order, so results do not depend on the threads.
class IncrementalNdcg {
 public:
  // k = 0: whole list. The dataset must outlive the object.
  IncrementalNdcg(const Dataset& data, int32_t k);

  // Sets the scores (one per document) and recomputes every query's NDCG.
  void Reset(absl::Span<const double> scores);

  // Sum of NDCG@k over the informative queries after the step.
  double TrialSum(int32_t feature, double step);

  // Applies the step to the held scores.
  void Accept(int32_t feature, double step);

  double current_sum() const { return current_sum_; }
  int32_t num_informative_queries() const {
    return static_cast<int32_t>(informative_.size());
  }

 private:
  double QueryNdcg(uint32_t j, const double* scores);
  // Evaluates `queries` (indices into informative_) on scores (+ step * x_f
  // when feature >= 0) into values.
  void Evaluate(absl::Span<const uint32_t> queries, int32_t feature,
                double step, bool apply, std::vector<double>& values);

  const Dataset& data_;
  const int32_t k_;
  std::vector<uint32_t> informative_;
  int64_t informative_documents_ = 0;
  std::vector<double> inverse_ideal_dcg_;  // per informative query
  std::vector<double> gain_;               // per document
  std::vector<double> discount_;           // per rank
  // varying_[f]: informative queries in which feature f is not constant.
  std::vector<std::vector<uint32_t>> varying_;
  std::vector<double> scores_;
  std::vector<double> trial_scores_;
  std::vector<uint32_t> order_;  // ranking scratch, per document
  std::vector<double> current_;  // NDCG per informative query
  std::vector<double> trial_;
  double current_sum_ = 0.0;
};

}  // namespace plrank

#endif  // PLRANK_CORE_LINEAR_INCREMENTAL_NDCG_H_
