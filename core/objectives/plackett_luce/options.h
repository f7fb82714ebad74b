#ifndef PLRANK_CORE_OBJECTIVES_PLACKETT_LUCE_OPTIONS_H_
#define PLRANK_CORE_OBJECTIVES_PLACKETT_LUCE_OPTIONS_H_

#include <cstdint>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace plrank {

// How the likelihood treats documents with equal labels.
enum class PlTies {
  // The paper: draw `permutations` random tie-breaks and average the
  // likelihoods of the resulting total orders.
  kPermutation,
  // Tie groups in closed form (no sampling): a group G of equal labels is
  // chosen, as a set, from G and everything labelled lower. Efron's
  // approximation of the expectation over all orders of G (the term of the
  // group's k-th pick has denominator R + (1 - k/|G|) E_G).
  kEfron,
  // Breslow's approximation: every pick of G sees the whole of G (R + E_G).
  kBreslow,
  // Each member d of G is picked from {d} and the documents labelled below
  // G only (R + e_d): equally labelled documents never compete, as in a
  // pairwise loss; the listwise analogue of pairwise logistic loss,
  // log(1 + sum_{l below} e^{s_l - s_d}).
  kIndependent,
};

// Per-term weights of the tie-group likelihood (kEfron / kBreslow).
enum class PlWeighting {
  kUniform,      // every term counts 1
  kGain,         // the term of a document labelled r counts 2^r - 1
  kPosition,     // the term at ideal position j counts 1 / log2(j + 2)
  kGainPosition,  // both: the term's share of the ideal DCG
  // The term of a pick counts the documents labelled below its group: the
  // number of pairs the pick orders, so queries weigh as in a pairwise loss
  // (more candidates below a relevant document, more weight).
  kPairs,
  kSqrtPairs,  // the square root of that count
};

// Knobs of the Plackett-Luce (ListMLE) objective. The defaults are the
// product's, PLRank's own settings chosen by the multi-regime quality
// benchmark (docs/training.md, "Choosing PLRank settings"): the whole
// ranking, ties in closed form (Efron), stop at the query's lowest label, a
// regularised leaf Newton step and the Newton split gain; the weighting is
// uniform, the small-data choice of --pl_weighting=auto (which the registry
// resolves by the training size, AutoPlWeighting). PaperPlackettLuceOptions()
// is the paper as written.
struct PlackettLuceOptions {
  // K: contexts per permutation are j = 1..min(topk, n); 0 = no cut-off.
  int32_t topk = 0;
  // m: ground-truth permutations (random tie-breaks) per query; the objective
  // is the MEAN of the m log-likelihoods.
  int32_t permutations = 1;
  // Salt mixed into the seed given to Init, so the tie-breaks can be redrawn
  // without changing the booster's own seed. 0 = Init's seed alone.
  uint64_t seed = 0;
  // Queries whose labels are all equal carry no ranking signal; drop them.
  bool skip_tied_queries = false;
  // K = min(topk, number of documents labelled above the query's lowest
  // label): stop before contexts that only choose among the least relevant.
  bool stop_at_lowest_label = true;
  // Guard of the leaf Newton step (our choice): the denominator is
  //   -L''_U + lambda_l2 + newton_damping * (weighted contexts touching U),
  // i.e. a damping that scales with the number of terms summed in L''_U.
  double newton_damping = 0.03;
  // |leaf value| is clipped to this before the learning rate; 0 = no clip.
  double max_leaf_step = 0.6;
  // Tie handling; kPermutation is the paper's.
  PlTies ties = PlTies::kEfron;
  PlWeighting weighting = PlWeighting::kUniform;
  // Tie groups only: scale each query's pick weights to sum to 1, so every
  // query counts the same whatever its number of relevant documents (as
  // NDCG averages queries).
  bool normalize_queries = false;
  // Leaf values from the diagonal Newton step -sum g / (sum h + lambda_l2)
  // (then clipped) instead of the exact per-context step.
  bool diagonal_leaf_step = false;
  // The split gain this configuration prefers under --split_gain=auto
  // (Objective::prefers_newton_split_gain): the paper fits trees by least
  // squares; PLRank's default uses the Newton gain.
  bool newton_split_gain = true;
};

// The paper's PLRank as written (Xia, Zhai & Wang; --pl_paper): K = 10, one
// sampled tie-break per query (permutations sets obj=m), every context down
// to the last document, uniform weights, the unregularised exact Newton
// step (damping 1e-6 and a clip of 100 only guard tiny curvature) and trees
// fit by least squares.
PlackettLuceOptions PaperPlackettLuceOptions();

// --pl_weighting=auto, PLRank's default, picks the weighting from the size
// of the training data: uniform below kAutoPlWeightingDocuments training
// documents, position weights from there on. Why (docs/training.md,
// bench/results/quality-real.md): on every real collection here
// (training folds of 1,900-16,000 documents: table retrieval, the LightGBM
// example, MQ2008, ClueWeb09) uniform weights are equal or better (+0.0005
// to +0.039 NDCG@10), while on the generated sets of 36,000 documents and
// more the two split evenly and position weights removed a significant loss
// against LambdaMART on heavy ties (36,000 training documents). The
// boundary lies between the two.
inline constexpr int64_t kAutoPlWeightingDocuments = 25'000;
PlWeighting AutoPlWeighting(int64_t train_documents);

// Parse the names used by --pl_ties / --pl_weighting (InvalidArgument, listing
// the valid names, otherwise). ParsePlWeighting does not take "auto": the
// registry resolves it with AutoPlWeighting.
absl::StatusOr<PlTies> ParsePlTies(const std::string& name);
const char* PlTiesName(PlTies ties);
const char* PlWeightingName(PlWeighting weighting);
absl::StatusOr<PlWeighting> ParsePlWeighting(const std::string& name);

// InvalidArgument when a field is out of range.
absl::Status ValidatePlackettLuceOptions(const PlackettLuceOptions& options);

}  // namespace plrank

#endif  // PLRANK_CORE_OBJECTIVES_PLACKETT_LUCE_OPTIONS_H_
