#include "core/data/datagen_regimes.h"

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace plrank {

absl::StatusOr<DatagenOptions> DatagenRegime(absl::string_view name) {
  DatagenOptions options;
  if (name == "mslr") return options;
  if (name == "many_relevant") {
    options.mean_docs_per_query = 150;
    options.docs_sigma = 0.3;
    options.num_features = 45;
    options.label_shares = {0.64, 0.20, 0.16};
    // OHSUMED judged pools: hardly any query lacks a relevant document, and
    // the number of relevant ones varies less than on the web.
    options.hopeless_share = 0.0;
    options.query_offset_share = 0.2;
    options.noise = 1.0;
    return options;
  }
  if (name == "sparse") {
    options.mean_docs_per_query = 60;
    options.docs_sigma = 0.5;
    options.label_shares = {0.97, 0.02, 0.01};
    // With only 3% relevant, even a moderate offset is strong: relevant
    // documents gather in about 60% of the queries and ~40% have none
    // (MQ2008: 28%). A larger offset empties more queries, and those count
    // NDCG = 1 for every system, so they only dilute the comparison.
    options.hopeless_share = 0.02;
    options.query_offset_share = 0.3;
    return options;
  }
  if (name == "graded_ties") {
    options.mean_docs_per_query = 40;
    options.docs_sigma = 0.5;
    options.num_features = 46;
    options.label_shares = {0.35, 0.25, 0.20, 0.12, 0.08};
    options.hopeless_share = 0.02;
    options.noise = 1.2;
    options.tie_levels = 10;
    return options;
  }
  if (name == "long_binary") {
    // TREC .gov pools (LETOR 3.0 TD2003/TD2004): about a thousand
    // documents per query, two grades, ~1% relevant, and every query has
    // some relevant documents.
    options.mean_docs_per_query = 700;
    options.docs_sigma = 0.25;
    options.num_features = 64;
    options.label_shares = {0.985, 0.015};
    options.hopeless_share = 0.0;
    options.query_offset_share = 0.1;
    return options;
  }
  if (name == "short_graded") {
    // Yahoo! LTR Challenge-like: short lists, mostly relevant, 5 grades.
    options.mean_docs_per_query = 24;
    options.docs_sigma = 0.6;
    options.label_shares = {0.26, 0.36, 0.28, 0.08, 0.02};
    options.hopeless_share = 0.0;
    return options;
  }
  if (name == "deep_graded") {
    // Istella-like: deep lists of ~300, 5 grades, 89% irrelevant.
    options.mean_docs_per_query = 300;
    options.docs_sigma = 0.5;
    options.label_shares = {0.89, 0.05, 0.04, 0.015, 0.005};
    return options;
  }
  if (name == "short_binary") {
    // Click-log-like: ten results per query, clicked or not, noisy; a third
    // of the queries without a click.
    options.mean_docs_per_query = 10;
    options.docs_sigma = 0.3;
    options.label_shares = {0.85, 0.15};
    options.noise = 1.5;
    options.hopeless_share = 0.1;
    return options;
  }
  if (name == "small") {
    // Small judged collections (a few thousand documents over 50-120
    // queries, like ClueWeb09 or table-retrieval feature sets): ~25 graded
    // documents per query, noisy labels. Few documents per leaf is the
    // point: the quality benchmark uses it at 100 queries per seed.
    options.mean_docs_per_query = 25;
    options.docs_sigma = 0.5;
    options.num_features = 46;
    options.label_shares = {0.45, 0.30, 0.15, 0.07, 0.03};
    options.hopeless_share = 0.02;
    options.noise = 1.0;
    return options;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown regime '", name,
                   "'; known: ", absl::StrJoin(DatagenRegimeNames(), ", ")));
}

std::vector<std::string> DatagenRegimeNames() {
  return {"mslr",        "many_relevant", "sparse",      "graded_ties",
          "long_binary", "short_graded",  "deep_graded", "short_binary",
          "small"};
}

absl::StatusOr<std::vector<double>> ParseLabelShares(absl::string_view text) {
  std::vector<double> shares;
  for (absl::string_view piece : absl::StrSplit(
           text, ',')) {
    double share = 0;
    if (!absl::SimpleAtod(absl::StripAsciiWhitespace(piece), &share)) {
      return absl::InvalidArgumentError(
          absl::StrCat("label shares: '", piece, "' is not a number in '",
                       text, "'"));
    }
    shares.push_back(share);
  }
  if (absl::Status status = ValidateLabelShares(shares); !status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("label shares '", text, "': ", status.message()));
  }
  return shares;
}

}  // namespace plrank
