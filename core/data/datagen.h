#ifndef PLRANK_CORE_DATA_DATAGEN_H_
#define PLRANK_CORE_DATA_DATAGEN_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "core/data/dataset.h"

namespace plrank {

// Options of the synthetic generator. The defaults give MSLR-WEB-shaped data
// (the "mslr" regime, see core/data/datagen_regimes.h), byte for byte what
// earlier versions generated; the regime options let a set look like other
// collections (many relevant documents per query, very few, heavy ties).
struct DatagenOptions {
  int32_t num_queries = 1000;
  // Documents per query follow a lognormal with this mean and log-spread
  // `docs_sigma`, clipped to [1, 10 * mean]. MSLR's spread is wide (0.7);
  // OHSUMED-like pools are nearly constant (0.3).
  double mean_docs_per_query = 120;
  double docs_sigma = 0.7;
  int32_t num_features = 136;
  uint64_t seed = 1;
  // Standard deviation of the noise added to the hidden relevance score
  // (whose own spread is about 1) before labels are cut from it. 0 makes
  // the labels a deterministic function of the hidden factors.
  double noise = 0.8;
  // Share of NaN values in the few features that have missing values.
  double missing_rate = 0.1;
  // Share of documents with each label 0..G-1 (G = size, 2..32), over the
  // whole set: labels are cut at these global quantiles of the label score.
  // Default: MSLR-WEB30K's 51% / 32% / 13% / 2.5% / 1.5%.
  std::vector<double> label_shares = {0.51, 0.32, 0.13, 0.025, 0.015};
  // Share of queries whose label scores are pushed far down, so that they
  // get no relevant document (MSLR has about 3%).
  double hopeless_share = 0.03;
  // Share of the label score's variance that comes from a per-query offset,
  // in [0, 1). 0: every query gets about the same number of relevant
  // documents; large values concentrate the relevant documents in few
  // queries, leaving most with none or one or two ("sparse" judgments).
  double query_offset_share = 0.35;
  // Heavy ties, off when 0. With N > 0 each query has at most N distinct
  // documents ("prototypes"): every document is a verbatim copy of one of N
  // prototypes drawn uniformly (same feature vector, NaNs included, and
  // same hidden relevance) plus its own label noise, so many documents share
  // an identical feature vector, and labels tie within and across copies.
  // Real collections have this from duplicate pages and from query-level
  // normalized features that are all zero for most documents (MQ2008).
  int32_t tie_levels = 0;
};

// Checks the options GenerateDataset needs: positive counts, finite
// non-negative noise and docs_sigma (at most 3), missing_rate in [0, 1),
// 2..32 finite non-negative label shares summing to 1 within 1e-6,
// hopeless_share in [0, 1], query_offset_share in [0, 1), tie_levels >= 0.
absl::Status ValidateDatagenOptions(const DatagenOptions& options);

// The label-share part of ValidateDatagenOptions.
absl::Status ValidateLabelShares(const std::vector<double>& shares);

// Generates a ranking dataset with the shape of MSLR-WEB30K, deterministic in
// `options` (same options, same bytes, on any machine):
// - each document has hidden factors, partly shared within its query;
// - features are a mix of kinds: informative (noisy monotone transforms of
//   one or two factors, on very different scales), integer counts, sparse
//   (mostly zero), near-copies of other features, pure noise, query-level
//   constants, and a few with missing (NaN) values;
// - labels 0..G-1 come from a nonlinear function of the factors (threshold
//   interactions, products, saturations) plus noise: within each query the
//   scores' ranks become normal quantiles, blended with a per-query offset
//   (weight `query_offset_share`; `hopeless_share` of the queries far down,
//   so they have no relevant document, as in MSLR), and cut at the global quantiles giving `label_shares` (by
//   default MSLR-WEB30K's 51% / 32% / 13% / 2.5% / 1.5%).
// With the default noise, XGBoost's rank:ndcg (200 trees, depth 6, 500
// training queries) reaches NDCG@10 ~0.67 on held-out queries and its linear
// booster ~0.59: trees clearly win, and a good model stays well below 1.
// With tie_levels > 0 documents are copies of per-query prototypes (above).
// Query ids are "1".."num_queries". Call ValidateDatagenOptions first;
// invalid options give an empty dataset.
Dataset GenerateDataset(const DatagenOptions& options);

}  // namespace plrank

#endif  // PLRANK_CORE_DATA_DATAGEN_H_
