#ifndef PLRANK_CORE_OBJECTIVES_OBJECTIVE_H_
#define PLRANK_CORE_OBJECTIVES_OBJECTIVE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/data/dataset.h"
#include "core/data/score_transform.h"

namespace plrank {

// Everything an objective needs to turn a fitted tree structure into leaf
// values. Produced by the booster after the tree learner has fixed the splits.
struct LeafAssignment {
  int32_t num_leaves = 0;
  int32_t output = 0;  // which model output (class) this tree belongs to
  // leaf_of_document[i] is the leaf that training document i falls in, or -1
  // when the document's query was left out of this iteration's bag.
  absl::Span<const int32_t> leaf_of_document;
  // Per-document gradients/hessians of this iteration (same layout as
  // ComputeGradients wrote them, for this output only).
  absl::Span<const float> gradients;
  absl::Span<const float> hessians;
  double lambda_l2 = 0.0;
};

// True when query q takes part in this iteration: the one reading of the
// query_in_bag flags the booster hands to ComputeGradients (empty: all do).
inline bool QueryInBag(absl::Span<const uint8_t> query_in_bag, size_t q) {
  return query_in_bag.empty() || query_in_bag[q] != 0;
}

// A boosting loss. The booster and the tree learner know objectives only
// through this interface; adding a loss never touches them.
//
// Conventions: the booster MINIMIZES the loss. Scores of output k for all
// documents are scores[k * num_documents + i]. ComputeGradients writes
// dLoss/dscore and a positive diagonal second derivative (used by the
// second-order split gain and the default leaf value). Every method must give
// bit-identical results whatever the OpenMP thread count.
class Objective {
 public:
  virtual ~Objective() = default;

  // Short, stable name as used by --objective (e.g. "plrank").
  virtual std::string name() const = 0;

  // Number of model outputs (trees per iteration): 1 for ranking losses.
  virtual int32_t num_outputs() const { return 1; }

  // How the model's outputs become one ranking score; the trainer stores it
  // in the model and ranks validation data by it. Identity for one output.
  virtual ScoreTransform output_transform() const {
    return ScoreTransform::kIdentity;
  }

  // The split gain this loss was tuned with, used when the user leaves
  // --split_gain at 'auto': true for the second-order (Newton) gain, false
  // for least squares on the pseudo-response. The tree learner stays
  // loss-agnostic: the trainer resolves 'auto' through this before boosting.
  virtual bool prefers_newton_split_gain() const { return false; }

  // Binds to the training set (labels and query boundaries): draws
  // permutations, builds contexts, precomputes ideal DCGs, ... `seed` makes
  // every random choice reproducible. Called once before boosting.
  virtual absl::Status Init(const Dataset& train, uint64_t seed) = 0;

  // Resuming a run (checkpoints): put the objective in the state it would be
  // in after `iteration` ComputeGradients calls since Init. Only losses
  // whose gradients depend on the call count (e.g. a random stream drawn
  // per iteration) override it.
  virtual void StartAtIteration(int32_t /*iteration*/) {}

  // Writes gradients and hessians for every document of every query whose
  // query_in_bag flag is set (others get 0). `query_in_bag` is empty when all
  // queries are in. Output layout matches `scores`.
  virtual void ComputeGradients(absl::Span<const double> scores,
                                absl::Span<const uint8_t> query_in_bag,
                                absl::Span<float> gradients,
                                absl::Span<float> hessians) = 0;

  // Leaf values (already including the sign: score += learning_rate * value)
  // for a tree whose structure is fixed:
  // LeafValuesFromStatistics(LeafStatistics(...)).
  void ComputeLeafValues(absl::Span<const double> scores,
                         const LeafAssignment& assignment,
                         absl::Span<double> leaf_values) const;

  // The additive per-leaf sums leaf values are computed from, over the
  // documents (or whole queries) that have a leaf: statistics of disjoint
  // sets of queries add up element-wise to the statistics of their union,
  // which is how distributed training reduces them over ranks (Reducer).
  // The layout is the objective's own; the default is {sum g per leaf, sum h
  // per leaf}, summed in document order.
  virtual std::vector<double> LeafStatistics(
      absl::Span<const double> scores, const LeafAssignment& assignment) const;

  // Leaf values from (possibly reduced) LeafStatistics. The default is the
  // Newton step of the diagonal approximation, -sum(g) / (sum(h) +
  // lambda_l2).
  virtual void LeafValuesFromStatistics(absl::Span<const double> statistics,
                                        const LeafAssignment& assignment,
                                        absl::Span<double> leaf_values) const;

  // The training loss at `scores` (lower is better); for logs and tests.
  virtual double Loss(absl::Span<const double> scores) const = 0;

  // Human-readable lines about preparation (e.g. context compression ratio),
  // printed by the trainer after Init. May be empty.
  virtual std::vector<std::string> Describe() const { return {}; }
};

}  // namespace plrank

#endif  // PLRANK_CORE_OBJECTIVES_OBJECTIVE_H_
