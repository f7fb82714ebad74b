#ifndef PLRANK_CORE_OBJECTIVES_PLACKETT_LUCE_PLACKETT_LUCE_H_
#define PLRANK_CORE_OBJECTIVES_PLACKETT_LUCE_PLACKETT_LUCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/data/dataset.h"
#include "core/objectives/objective.h"
#include "core/objectives/plackett_luce/tie_groups.h"
#include "core/objectives/plackett_luce/options.h"
#include "core/objectives/query_objective.h"

namespace plrank {

// The Plackett-Luce likelihood with ties in closed form (options.ties is
// kEfron, kBreslow or kIndependent): instead of sampling tie-breaks, each group G of
// equally labelled documents is picked, as a set, from G and the documents
// labelled below it (R = their sum of e^s, E = G's):
//   LL = sum_G sum_{k < terms_G} w_{G,k} [ mean_{g in G} s_g - log D_{G,k} ]
//   D_{G,k} = R_G + c_{G,k} E_G,   c = 1 - k/|G| (Efron) or 1 (Breslow).
// Efron's denominators are the expected ones over the |G|! orders of G, so
// this is the paper's obj=m objective with m -> infinity, at O(n) per query
// and without sampling noise. With |G| = 1 everywhere it is the paper's
// ListMLE exactly. kIndependent picks each member d alone against R:
//   LL = sum_G sum_{d in G} wbar_G [ s_d - log(R_G + e_d) ],
// wbar_G = (sum of G's pick weights) / |G|. Loss() = -LL.
//
// Derivatives of LL (gradient = -L'(d), hessian = the diagonal of -LL''):
//   d in G:     L'(d) = W_G/|G| - e_d sum_k w c/D - e_d sum_{G' above} A_G'
//   d below G': contributes -e_d A_G',  A_G' = sum_k w/D_{G',k}
// and the per-leaf Newton step is exact, as in PlackettLucePermutationObjective:
//   P_{U,G,k} = (R_{G,U} + c E_{G,U}) / D_{G,k},
//   L''_U = -sum_{G,k} w P (1 - P),  value = L'_U / (-L''_U + l2 + damping N_U)
// clipped to max_leaf_step. Training weights (TrainingWeights): every term
// of G counts w_q mean_{g in G} w_g, and mean_g s_g becomes
// sum_g (w_g / mean w) s_g / |G| (each member's numerator share follows its
// weight); under kIndependent member d's pick counts wbar_G w_d / mean w. Every sum is formed from positive terms (no
// total-minus-part cancellation). Deterministic for any thread count.
class PlackettLuceObjective : public QueryObjective {
 public:
  explicit PlackettLuceObjective(const PlackettLuceOptions& options)
      : options_(options) {}

  std::string name() const override { return "plrank"; }
  bool prefers_newton_split_gain() const override {
    return options_.newton_split_gain;
  }
  // Query q's booster gradient -L'(d) and hessian (see above).
  void QueryDerivatives(size_t q, const double* scores, double* gradients,
                        double* hessians, QueryScratch& scratch) const override;
  double QueryLoss(size_t q, const double* scores,
                   QueryScratch& scratch) const override;
  std::vector<double> LeafStatistics(
      absl::Span<const double> scores,
      const LeafAssignment& assignment) const override;
  void LeafValuesFromStatistics(absl::Span<const double> statistics,
                                const LeafAssignment& assignment,
                                absl::Span<double> leaf_values) const override;
  std::vector<std::string> Describe() const override;

  // L'(d) and the diagonal of LL'' (<= 0) in double, for tests.
  void ComputeDerivatives(absl::Span<const double> scores,
                          absl::Span<const uint8_t> query_in_bag,
                          absl::Span<double> first,
                          absl::Span<double> diagonal_second) const;

  // Per leaf: L'_U, L''_U (<= 0) and N_U (summed weights of the terms whose
  // contexts hold a document of U). Documents with leaf -1 are in no leaf; a
  // query whose first document has leaf -1 is out of the bag.
  struct LeafDerivatives {
    std::vector<double> first, second, contexts;
  };
  LeafDerivatives ComputeLeafDerivatives(
      absl::Span<const double> scores,
      absl::Span<const int32_t> leaf_of_document, int32_t num_leaves) const;

 protected:
  absl::Status InitQueries(const Dataset& train, uint64_t seed) override;
  // Weights enter the term weights and member shares (PlTieGroups::Build).
  bool applies_own_weights() const override { return true; }
  std::unique_ptr<QueryScratch> NewScratch() const override;

 private:
  PlackettLuceOptions options_;
  PlTieGroups groups_;
};

}  // namespace plrank

#endif  // PLRANK_CORE_OBJECTIVES_PLACKETT_LUCE_PLACKETT_LUCE_H_
