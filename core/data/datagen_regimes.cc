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
  return absl::InvalidArgumentError(
      absl::StrCat("unknown regime '", name,
                   "'; known: ", absl::StrJoin(DatagenRegimeNames(), ", ")));
}

std::vector<std::string> DatagenRegimeNames() {
  return {"mslr", "many_relevant", "sparse", "graded_ties"};
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
