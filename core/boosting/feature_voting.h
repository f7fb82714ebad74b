#ifndef PLRANK_CORE_BOOSTING_FEATURE_VOTING_H_
#define PLRANK_CORE_BOOSTING_FEATURE_VOTING_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace plrank {

// The two steps of voting-parallel split finding (PV-Tree: Meng et al.,
// "A Communication-Efficient Parallel Algorithm for Decision Tree",
// NeurIPS 2016; LightGBM's tree_learner=voting) that decide which features'
// histograms are summed over the ranks. Pure functions of their inputs, so
// every rank, given the same summed ballot, elects the same features.
//
// Local vote: each rank finds every feature's best split gain on its own
// documents and proposes its `top_k` best features. The ballot is dense
// (one double per feature): the ranks' ballots are summed with the
// reducer's Sum, a collective whose size does not grow with the rank
// count, and the summed value of a feature is the sum of the local gains
// of the ranks that proposed it (a rank's gain scales with its share of
// the leaf's documents, so this estimates the global gain of the proposed
// features and counts votes at the same time).
//
// local_gain[f]: rank's best gain of feature f (BinnedDataset index), <= 0
// or NaN when f has no admissible local split. Writes ballot[f] = that gain
// for the top_k features of `features` with the largest positive gains
// (ties to the lower feature), 0 for every other entry of `ballot`.
// Requires ballot.size() >= local_gain.size() > every feature of `features`.
void CastBallot(absl::Span<const double> local_gain,
                absl::Span<const int32_t> features, int32_t top_k,
                absl::Span<double> ballot);

// Global vote: the at most `seats` features of `features` with the largest
// positive summed ballots (ties to the lower feature), in ascending feature
// order. Features no rank proposed are never elected.
std::vector<int32_t> ElectFeatures(absl::Span<const double> summed_ballot,
                                   absl::Span<const int32_t> features,
                                   int32_t seats);

}  // namespace plrank

#endif  // PLRANK_CORE_BOOSTING_FEATURE_VOTING_H_
