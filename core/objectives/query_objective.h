#ifndef PLRANK_CORE_OBJECTIVES_QUERY_OBJECTIVE_H_
#define PLRANK_CORE_OBJECTIVES_QUERY_OBJECTIVE_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/data/dataset.h"
#include "core/objectives/objective.h"
#include "core/objectives/query_labels.h"

namespace plrank {

// The house of every per-query loss (as LightGBM's RankingObjective): it owns
// the training queries' labels, runs the one deterministic threaded loop over
// queries, zero-fills the queries left out of the bag and sums the loss in
// query order. A loss implements only what is specific to it:
//   InitQueries      its precomputation, once queries() is built;
//   QueryDerivatives one in-bag query's gradients and hessians (double);
//   QueryLoss        one query's loss;
// and optionally NewScratch (its per-thread buffers) and ComputeLeafValues
// (an exact leaf step, as PLRank does). The virtual calls are per query, never
// per document.
//
// Multi-output losses (McRank) see the scores of output k of the query at
// scores + k * queries().num_documents() and write the derivatives of output
// k, local document i at [k * n + i] (n = queries().size(q)).
//
// Results are bit-identical whatever the OpenMP thread count: a query's
// derivatives are written only by the thread that computes them, and the
// per-query losses are added in query order.
class QueryObjective : public Objective {
 public:
  // Builds queries() (InvalidArgument for a label outside [0, kMaxLabel] or
  // inconsistent offsets), then calls InitQueries.
  absl::Status Init(const Dataset& train, uint64_t seed) final;

  // Out-of-bag queries get gradient = hessian = 0 for every output; the
  // others get QueryDerivatives rounded to float.
  void ComputeGradients(absl::Span<const double> scores,
                        absl::Span<const uint8_t> query_in_bag,
                        absl::Span<float> gradients,
                        absl::Span<float> hessians) override;

  // Sum over queries of QueryLoss, added in query order.
  double Loss(absl::Span<const double> scores) const final;

  // ComputeGradients in double precision (no float rounding), for tests and
  // diagnostics.
  void ComputeDerivativesDouble(absl::Span<const double> scores,
                                absl::Span<const uint8_t> query_in_bag,
                                absl::Span<double> gradients,
                                absl::Span<double> hessians) const;

  // Query q's gradients and hessians (see the class comment for the layout);
  // only called for in-bag queries, and must write every value (0 for a
  // query that carries no signal). `scratch` is this thread's NewScratch().
  virtual void QueryDerivatives(size_t q, const double* scores,
                                double* gradients, double* hessians,
                                QueryScratch& scratch) const = 0;

  // Query q's loss (scores as for QueryDerivatives).
  virtual double QueryLoss(size_t q, const double* scores,
                           QueryScratch& scratch) const = 0;

  const QueryLabels& queries() const { return queries_; }

  // Query q's weight (1 without query weights) and document i's (global
  // index; 1 without document weights).
  double query_weight(size_t q) const {
    return training_weights().query.empty() ? 1.0 : training_weights().query[q];
  }
  double document_weight(size_t i) const {
    return training_weights().document.empty() ? 1.0
                                               : training_weights().document[i];
  }

 protected:
  // Builds queries() from `train` (what Init does before InitQueries); for a
  // loss's other ways to initialise (PLRank's given permutations).
  absl::Status BindQueries(const Dataset& train);

  // The loss's own preparation; queries() is already built.
  virtual absl::Status InitQueries(const Dataset& train, uint64_t seed) = 0;

  // True when the loss applies training_weights() itself (in its
  // derivatives, loss and leaf step). Otherwise the base scales query q's
  // derivatives and loss by its query weight and refuses document weights.
  virtual bool applies_own_weights() const { return false; }

  // One thread's buffers, created once per parallel region. A loss that
  // needs more than QueryScratch returns a subclass and downcasts it.
  virtual std::unique_ptr<QueryScratch> NewScratch() const;

 private:
  template <typename T>
  void WriteDerivatives(absl::Span<const double> scores,
                        absl::Span<const uint8_t> query_in_bag, T* gradients,
                        T* hessians) const;

  QueryLabels queries_;
};

}  // namespace plrank

#endif  // PLRANK_CORE_OBJECTIVES_QUERY_OBJECTIVE_H_
