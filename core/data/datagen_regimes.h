#ifndef PLRANK_CORE_DATA_DATAGEN_REGIMES_H_
#define PLRANK_CORE_DATA_DATAGEN_REGIMES_H_

// Named presets of the generator's options, so benchmarks cover the shapes
// real ranking collections have, not only MSLR's. Their statistics are
// checked by tests/unit/data/datagen_regimes_test.cc.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/data/datagen.h"

namespace plrank {

// Measured (1000 queries, seeds 1 and 2; plrank-datagen prints these):
// "mslr": the defaults — MSLR-WEB30K-like: 116-119 documents per query
//   (median 93, wide spread), 5 grades 51/32/13/2.5/1.5%, 49% relevant,
//   57-58 relevant per query (median 40), 2.5-2.9% queries without any
//   relevant document, 136 features.
// "many_relevant": OHSUMED-like — 148-150 documents per query (median
//   143, small spread), 3 grades 64/20/16% (36% relevant, ~53 per query,
//   no query without one), 45 features, noisier labels (1.0).
// "sparse": most queries have 0-2 relevant documents — 59-60 documents per
//   query, 3 grades 97/2/1% (3% relevant, 1.8 per query, median 1),
//   42-45% queries without any, 79% with 0-2, 136 features.
// "graded_ties": 5 grades 35/25/20/12/8% (65% relevant), 39-40 documents
//   per query drawn from 10 prototypes each, so 97% of the documents share
//   their feature vector with another one of the query; noisy labels (1.2),
//   46 features.
// "long_binary": TD2003/TD2004-like (LETOR 3.0 .gov pools) — 692-699
//   documents per query (median 675-679), 2 grades 98.5/1.5%, ~10.4
//   relevant per query (median 7-8), 0.2-0.4% queries without any, 13%
//   with 0-2, 64 features.
// "short_graded": Yahoo! LTR-like — 23-24 documents per query (median
//   20), 5 grades 26/36/28/8/2% (74% relevant, ~17 per query), no query
//   without one, 136 features.
// "deep_graded": Istella-like — 293-299 documents per query (median
//   262-265), 5 grades 89/5/4/1.5/0.5% (11% relevant, ~32 per query,
//   median 16-17), 5.5-5.7% queries without any, 136 features.
// "short_binary": click-log-like — 10 documents per query, 2 grades
//   85/15% (~1.5 relevant per query, median 1), noisy labels (1.5), 35%
//   of the queries without any, 136 features.
// "small": small judged collections — ~25 documents per query, 5 grades
//   45/30/15/7/3%, noisy labels (1.0), 46 features; meant for 50-120
//   queries (at most ~3,000 documents).
// num_queries and seed keep their defaults; callers set them.
absl::StatusOr<DatagenOptions> DatagenRegime(absl::string_view name);

// The regime names above, in that order.
std::vector<std::string> DatagenRegimeNames();

// Parses "0.51,0.32,0.13,0.025,0.015" (share of label 0, 1, ...) and checks
// it with ValidateLabelShares.
absl::StatusOr<std::vector<double>> ParseLabelShares(absl::string_view text);

}  // namespace plrank

#endif  // PLRANK_CORE_DATA_DATAGEN_REGIMES_H_
