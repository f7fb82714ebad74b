#include "server/servable_version.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "core/model/model_io.h"
#include "plrank/v1/model.pb.h"
#include "server/structured_log.h"

namespace plrank::server {
namespace {

absl::StatusOr<std::string> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("model file ", path, ": cannot be opened"));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    return absl::DataLossError(
        absl::StrCat("model file ", path, ": read error"));
  }
  return std::move(buffer).str();
}

// Latest recorded metrics, "train ndcg@10" / "valid ndcg@10", taken at the
// best iteration when one is recorded.
void AddTrainingMetrics(const Ensemble& model, v1::ModelMetadata* metadata) {
  if (model.history.empty()) return;
  const IterationMetrics* chosen = &model.history.back();
  for (const IterationMetrics& record : model.history) {
    if (record.iteration == model.best_iteration) chosen = &record;
  }
  auto& out = *metadata->mutable_training_metrics();
  out["train loss"] = chosen->train_loss;
  for (const auto& [name, value] : chosen->train) out["train " + name] = value;
  for (const auto& [name, value] : chosen->valid) out["valid " + name] = value;
}

absl::Status WarmUp(const ForestScorer& scorer, const std::string& path) {
  constexpr size_t kRows = ForestScorer::kBlockDocs + 1;
  const size_t width = static_cast<size_t>(scorer.num_features());
  std::vector<float> rows(kRows * width, 0.0f);
  // The last row is all-missing: exercises every default direction.
  for (size_t f = 0; f < width; ++f) {
    rows[(kRows - 1) * width + f] = std::numeric_limits<float>::quiet_NaN();
  }
  std::vector<double> scores(kRows);
  scorer.Score(rows, kRows, absl::MakeSpan(scores));
  for (double score : scores) {
    if (!std::isfinite(score)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "model file ", path, ": warm-up produced a non-finite score"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

ServableVersion::ServableVersion(std::string model, int64_t version,
                                 std::string model_file, ForestScorer scorer,
                                 v1::ModelMetadata metadata,
                                 int64_t loaded_unix_seconds)
    : model_(std::move(model)),
      version_(version),
      version_string_(absl::StrCat(version)),
      model_file_(std::move(model_file)),
      scorer_(std::move(scorer)),
      metadata_(std::move(metadata)),
      loaded_unix_seconds_(loaded_unix_seconds) {}

ServableVersion::~ServableVersion() {
  LogEvent("info", "version_released",
           {{"model", model_}, {"version", version_string_}});
}

absl::StatusOr<std::shared_ptr<const ServableVersion>> LoadServableVersion(
    const std::string& model, int64_t version, const std::string& model_file) {
  absl::StatusOr<std::string> bytes = ReadBytes(model_file);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<Ensemble> ensemble =
      ParseModel(*bytes, absl::StrCat("model file ", model_file));
  if (!ensemble.ok()) return ensemble.status();
  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(*ensemble);
  if (!scorer.ok()) {
    return absl::Status(scorer.status().code(),
                        absl::StrCat("model file ", model_file, ": ",
                                     scorer.status().message()));
  }
  absl::Status warm = WarmUp(*scorer, model_file);
  if (!warm.ok()) return warm;

  v1::ModelMetadata metadata;
  metadata.set_objective(ensemble->objective);
  metadata.set_num_trees(static_cast<uint32_t>(ensemble->trees.size()));
  metadata.set_num_features(static_cast<uint32_t>(ensemble->num_features));
  metadata.set_num_outputs(static_cast<uint32_t>(ensemble->num_outputs));
  metadata.set_has_linear_weights(!ensemble->linear_weights.empty());
  metadata.set_created_unix_seconds(ensemble->created_unix_seconds);
  metadata.set_file_bytes(bytes->size());
  v1::ModelFile envelope;  // parsed already by ParseModel; cannot fail here
  if (envelope.ParseFromString(*bytes)) {
    metadata.set_checksum(absl::StrFormat("%016x", envelope.checksum()));
  }
  AddTrainingMetrics(*ensemble, &metadata);
  return std::make_shared<const ServableVersion>(
      model, version, model_file, *std::move(scorer), std::move(metadata),
      absl::ToUnixSeconds(absl::Now()));
}

}  // namespace plrank::server
