// plrank-datagen: writes synthetic MSLR-shaped LETOR data (see
// core/data/datagen.h), either as one file or as a 60/20/20 query split.

#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "core/data/datagen.h"
#include "core/data/dataset.h"
#include "core/data/dataset_slice.h"
#include "core/data/letor_writer.h"
#include "trainer/cli/cli_common.h"

ABSL_FLAG(int32_t, queries, 1000, "number of queries");
ABSL_FLAG(double, mean_docs, 120, "mean documents per query");
ABSL_FLAG(int32_t, features, 136, "number of features");
ABSL_FLAG(uint64_t, seed, 1, "random seed; same seed, same bytes");
ABSL_FLAG(double, noise, plrank::DatagenOptions().noise,
          "label noise (standard deviation against a relevance spread of ~1)");
ABSL_FLAG(double, missing_rate, plrank::DatagenOptions().missing_rate,
          "share of NaN values in the few features that have missing values");
ABSL_FLAG(std::string, out, "", "write all queries to this file");
ABSL_FLAG(std::string, out_prefix, "",
          "write PREFIX.train / PREFIX.vali / PREFIX.test, split 60/20/20 by "
          "query in generation order");

namespace plrank {
namespace {

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
  DatagenOptions options;
  options.num_queries = absl::GetFlag(FLAGS_queries);
  options.mean_docs_per_query = absl::GetFlag(FLAGS_mean_docs);
  options.num_features = absl::GetFlag(FLAGS_features);
  options.seed = absl::GetFlag(FLAGS_seed);
  options.noise = absl::GetFlag(FLAGS_noise);
  options.missing_rate = absl::GetFlag(FLAGS_missing_rate);
  if (absl::Status status = ValidateDatagenOptions(options); !status.ok()) {
    return status;
  }
  if (!prefix.empty() && options.num_queries < 3) {
    return absl::InvalidArgumentError(
        "--out_prefix needs at least 3 queries (one per split)");
  }
  const Dataset data = GenerateDataset(options);
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
      "Generates synthetic MSLR-shaped LETOR data.\n"
      "  plrank-datagen --queries 1000 --out data.txt\n"
      "  plrank-datagen --queries 1000 --out_prefix synth   # .train/.vali/.test");
  if (absl::Status status = plrank::Run(); !status.ok()) {
    return plrank::cli::Fail(status);
  }
  return 0;
}
