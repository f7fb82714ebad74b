// plrank-datagen: writes synthetic LETOR data (see core/data/datagen.h),
// either as one file or as a 60/20/20 query split. --regime picks a preset
// shaped like a kind of collection (core/data/datagen_regimes.h); any data
// flag given explicitly overrides the preset's value.

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "core/data/datagen.h"
#include "core/data/datagen_regimes.h"
#include "core/data/dataset.h"
#include "core/data/dataset_slice.h"
#include "core/data/dataset_stats.h"
#include "core/data/letor_writer.h"
#include "trainer/cli/cli_common.h"

ABSL_FLAG(std::string, regime, "mslr",
          "preset of the data flags below: mslr (MSLR-WEB-like, the "
          "defaults), many_relevant (OHSUMED-like: ~150 docs/query, about a "
          "third relevant, 3 grades, 45 features), sparse (most queries have "
          "0-2 relevant docs: ~60 docs/query, 3% relevant, 3 grades), "
          "graded_ties (5 grades, ~40 docs/query from 10 prototypes each: "
          "heavy ties, 46 features), long_binary (TD2003-like: ~700 "
          "docs/query, 2 grades, 1.5% relevant, 64 features), short_graded "
          "(Yahoo! LTR-like: ~24 docs/query, 5 grades, 74% relevant), "
          "deep_graded (Istella-like: ~300 docs/query, 5 grades, 11% "
          "relevant), short_binary (click-log-like: 10 docs/query, 2 "
          "grades, 15% relevant, noisy); a flag given explicitly overrides "
          "it");
ABSL_FLAG(int32_t, queries, 1000, "number of queries");
ABSL_FLAG(std::optional<double>, mean_docs, std::nullopt,
          "mean documents per query (default: the regime's; mslr 120)");
ABSL_FLAG(std::optional<double>, docs_sigma, std::nullopt,
          "lognormal spread (sigma of the log) of documents per query "
          "(default: the regime's; mslr 0.7)");
ABSL_FLAG(std::optional<int32_t>, features, std::nullopt,
          "number of features (default: the regime's; mslr 136)");
ABSL_FLAG(uint64_t, seed, 1, "random seed; same flags and seed, same bytes");
ABSL_FLAG(std::optional<double>, noise, std::nullopt,
          "label noise (standard deviation against a relevance spread of ~1; "
          "default: the regime's; mslr 0.8)");
ABSL_FLAG(std::optional<double>, missing_rate, std::nullopt,
          "share of NaN values in the few features that have missing values "
          "(default: 0.1 in every regime)");
ABSL_FLAG(std::optional<std::string>, label_shares, std::nullopt,
          "share of documents with label 0, 1, ..., G-1, e.g. "
          "0.51,0.32,0.13,0.025,0.015 (the count of numbers is the number of "
          "grades, 2..32; they must sum to 1 within 1e-6; default: the "
          "regime's; mslr MSLR-WEB30K's, as in the example)");
ABSL_FLAG(std::optional<double>, hopeless_share, std::nullopt,
          "share of queries pushed down so that they have no relevant "
          "document (default: the regime's; mslr 0.03)");
ABSL_FLAG(std::optional<double>, query_offset_share, std::nullopt,
          "share of the label score's variance from a per-query offset, in "
          "[0, 1): large values concentrate relevant documents in few "
          "queries, i.e. sparse judgments (default: the regime's; mslr 0.35)");
ABSL_FLAG(std::optional<int32_t>, tie_levels, std::nullopt,
          "heavy ties: 0 = off; N > 0 = each query's documents are copies of "
          "N prototypes (identical feature vectors, same hidden relevance, "
          "own label noise) (default: the regime's; mslr 0, graded_ties 10)");
ABSL_FLAG(std::string, out, "", "write all queries to this file");
ABSL_FLAG(std::string, out_prefix, "",
          "write PREFIX.train / PREFIX.vali / PREFIX.test, split 60/20/20 by "
          "query in generation order");

namespace plrank {
namespace {

// Sets *target to the flag's value when the flag was given. The regime flags
// are optional so that "not given" (keep the preset) differs from "given
// with the mslr default".
template <typename T, typename U>
void Override(const absl::Flag<std::optional<T>>& flag, U* target) {
  if (const std::optional<T> value = absl::GetFlag(flag); value.has_value()) {
    *target = *value;
  }
}

// The regime's options with every explicitly given flag applied on top.
absl::StatusOr<DatagenOptions> OptionsFromFlags() {
  absl::StatusOr<DatagenOptions> options =
      DatagenRegime(absl::GetFlag(FLAGS_regime));
  if (!options.ok()) return options.status();
  options->num_queries = absl::GetFlag(FLAGS_queries);
  options->seed = absl::GetFlag(FLAGS_seed);
  Override(FLAGS_mean_docs, &options->mean_docs_per_query);
  Override(FLAGS_docs_sigma, &options->docs_sigma);
  Override(FLAGS_features, &options->num_features);
  Override(FLAGS_noise, &options->noise);
  Override(FLAGS_missing_rate, &options->missing_rate);
  Override(FLAGS_hopeless_share, &options->hopeless_share);
  Override(FLAGS_query_offset_share, &options->query_offset_share);
  Override(FLAGS_tie_levels, &options->tie_levels);
  if (const std::optional<std::string> text = absl::GetFlag(FLAGS_label_shares);
      text.has_value()) {
    absl::StatusOr<std::vector<double>> shares = ParseLabelShares(*text);
    if (!shares.ok()) return shares.status();
    options->label_shares = *shares;
  }
  if (absl::Status status = ValidateDatagenOptions(*options); !status.ok()) {
    return status;
  }
  return options;
}

absl::Status WriteAndReport(const Dataset& data, const std::string& path) {
  if (absl::Status status = WriteLetorFile(data, path); !status.ok()) {
    return status;
  }
  std::printf("wrote %s: %zu queries, %zu documents, %d features\n",
              path.c_str(), data.num_queries(), data.num_documents(),
              data.num_features);
  return absl::OkStatus();
}

absl::Status Run() {
  const std::string out = absl::GetFlag(FLAGS_out);
  const std::string prefix = absl::GetFlag(FLAGS_out_prefix);
  if (out.empty() == prefix.empty()) {
    return absl::InvalidArgumentError(
        "give exactly one of --out FILE or --out_prefix PREFIX");
  }
  absl::StatusOr<DatagenOptions> options = OptionsFromFlags();
  if (!options.ok()) return options.status();
  if (!prefix.empty() && options->num_queries < 3) {
    return absl::InvalidArgumentError(
        "--out_prefix needs at least 3 queries (one per split)");
  }
  const Dataset data = GenerateDataset(*options);
  // What the set looks like, so a regime's shape can be checked at a glance.
  std::printf("regime %s: %s\n", absl::GetFlag(FLAGS_regime).c_str(),
              FormatDatasetStats(ComputeDatasetStats(data)).c_str());
  if (!out.empty()) return WriteAndReport(data, out);

  const size_t num_queries = data.num_queries();
  // Every split gets at least one query; the rest goes 60/20/20.
  size_t train_end = std::max<size_t>(1, num_queries * 6 / 10);
  size_t vali_end = std::max<size_t>(train_end + 1, num_queries * 8 / 10);
  if (vali_end >= num_queries) vali_end = num_queries - 1;
  if (train_end >= vali_end) train_end = vali_end - 1;
  const struct {
    const char* suffix;
    size_t begin, end;
  } parts[] = {{".train", 0, train_end},
               {".vali", train_end, vali_end},
               {".test", vali_end, num_queries}};
  for (const auto& part : parts) {
    if (absl::Status status = WriteAndReport(
            SliceQueries(data, part.begin, part.end), prefix + part.suffix);
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace plrank

int main(int argc, char** argv) {
  plrank::cli::ParseFlagsOrDie(
      argc, argv,
      "Generates synthetic LETOR data (MSLR-shaped by default).\n"
      "  plrank-datagen --queries 1000 --out data.txt\n"
      "  plrank-datagen --queries 1000 --out_prefix synth   # .train/.vali/.test\n"
      "  plrank-datagen --regime=sparse --queries 1500 --out_prefix sparse");
  if (absl::Status status = plrank::Run(); !status.ok()) {
    return plrank::cli::Fail(status);
  }
  return 0;
}
