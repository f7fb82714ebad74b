#include "server/lifecycle/servable_version.h"

#include <algorithm>
#include <malloc.h>

#include <cmath>
#include <filesystem>
#include <system_error>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "core/data/file_io.h"
#include "core/model/model_io.h"
#include "server/lifecycle/structured_log.h"

namespace plrank::server {
namespace {

// Latest recorded metrics, "train ndcg@10" / "valid ndcg@10", taken at the
// best iteration when one is recorded.
void AddTrainingMetrics(const Ensemble& model, ModelMetadata* metadata) {
  if (model.history.empty()) return;
  const IterationMetrics* chosen = &model.history.back();
  for (const IterationMetrics& record : model.history) {
    if (record.iteration == model.best_iteration) chosen = &record;
  }
  auto& out = metadata->training_metrics;
  out["train loss"] = chosen->train_loss;
  for (const auto& [name, value] : chosen->train) out["train " + name] = value;
  for (const auto& [name, value] : chosen->valid) out["valid " + name] = value;
}

// Floats of the warm-up batch: enough for a full block of documents plus a
// remainder on ordinary models, and only a few rows on very wide ones.
constexpr size_t kWarmUpFloats = size_t{1} << 20;

absl::Status WarmUp(const ForestScorer& scorer, const std::string& path) {
  // Rows are only as wide as the features the model reads (row_width), not
  // the count it declares: a model file is untrusted input.
  const size_t width = static_cast<size_t>(scorer.row_width());
  const size_t stride = std::max<size_t>(width, 1);
  const size_t rows_count = std::clamp<size_t>(kWarmUpFloats / stride, 2,
                                               ForestScorer::kBlockDocs + 1);
  std::vector<float> rows(rows_count * stride, 0.0f);
  // The last row is all-missing: exercises every default direction.
  for (size_t f = 0; f < width; ++f) {
    rows[(rows_count - 1) * stride + f] =
        std::numeric_limits<float>::quiet_NaN();
  }
  std::vector<double> scores(rows_count);
  scorer.Score(rows, rows_count, absl::MakeSpan(scores), stride);
  for (double score : scores) {
    if (!std::isfinite(score)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "model file ", path, ": warm-up produced a non-finite score"));
    }
  }
  return absl::OkStatus();
}

const char* TransformName(ScoreTransform transform) {
  switch (transform) {
    case ScoreTransform::kIdentity:
      return "identity";
    case ScoreTransform::kExpectedRelevance:
      return "expected_relevance";
  }
  return "unknown";
}

// Heap bytes in use (glibc: small blocks and mmapped ones).
uint64_t AllocatedBytes() {
  const struct mallinfo2 info = mallinfo2();
  return static_cast<uint64_t>(info.uordblks) +
         static_cast<uint64_t>(info.hblkhd);
}

absl::StatusOr<std::shared_ptr<ServableVersion>> LoadUnguarded(
    const std::string& model, int64_t version, const std::string& model_file,
    const std::string& bytes, ServableVersion::ReleaseHook on_release,
    const std::string& scoring_kernel) {
  absl::StatusOr<ParsedModelFile> parsed =
      ParseModelFile(bytes, absl::StrCat("model file ", model_file));
  if (!parsed.ok()) return parsed.status();
  const Ensemble* ensemble = &parsed->model;
  ForestScorer::Options scoring;
  scoring.kernel = scoring_kernel;
  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(*ensemble, scoring);
  if (!scorer.ok()) {
    return absl::Status(scorer.status().code(),
                        absl::StrCat("model file ", model_file, ": ",
                                     scorer.status().message()));
  }
  absl::Status warm = WarmUp(*scorer, model_file);
  if (!warm.ok()) return warm;

  ModelMetadata metadata;
  metadata.objective = ensemble->objective;
  metadata.num_trees = static_cast<uint32_t>(ensemble->trees.size());
  metadata.num_features = static_cast<uint32_t>(ensemble->num_features);
  metadata.num_outputs = static_cast<uint32_t>(ensemble->num_outputs);
  metadata.score_transform = TransformName(ensemble->transform);
  metadata.has_linear_weights = !ensemble->linear_weights.empty();
  metadata.feature_names = ensemble->feature_names;
  metadata.created_unix_seconds = ensemble->created_unix_seconds;
  metadata.file_bytes = bytes.size();
  metadata.checksum = absl::StrFormat("%016x", parsed->checksum);
  metadata.scoring_kernel = std::string(scorer->kernel_name());
  metadata.scoring_kernel_plan = scorer->kernel_plan_name();
  AddTrainingMetrics(*ensemble, &metadata);
  // Prepared at load, like the scorer: Explain requests only read it. A
  // model it cannot explain still serves Rank and Evaluate.
  absl::StatusOr<EnsembleExplainer> explainer =
      EnsembleExplainer::Create(*ensemble);
  return std::make_shared<ServableVersion>(
      model, version, model_file, *std::move(scorer), std::move(metadata),
      absl::ToUnixSeconds(absl::Now()), std::move(on_release),
      std::move(explainer));
}

absl::Status OutOfMemory(const std::string& model_file, const char* what) {
  return absl::ResourceExhaustedError(absl::StrCat(
      "model file ", model_file, ": out of memory while loading (", what,
      "); the model is too large for this server's memory limit"));
}

}  // namespace

ServableVersion::ServableVersion(std::string model, int64_t version,
                                 std::string model_file, ForestScorer scorer,
                                 ModelMetadata metadata,
                                 int64_t loaded_unix_seconds,
                                 ReleaseHook on_release,
                                 absl::StatusOr<EnsembleExplainer> explainer)
    : model_(std::move(model)),
      version_(version),
      version_string_(absl::StrCat(version)),
      model_file_(std::move(model_file)),
      scorer_(std::move(scorer)),
      explainer_(std::move(explainer)),
      metadata_(std::move(metadata)),
      loaded_unix_seconds_(loaded_unix_seconds),
      on_release_(std::move(on_release)) {}

ServableVersion::~ServableVersion() {
  LogEvent("info", "version_released",
           {{"model", model_}, {"version", version_string_}});
  if (on_release_) on_release_(*this);
}

absl::Status CheckCompatible(const ModelMetadata& serving,
                             const ModelMetadata& candidate,
                             std::string* reason) {
  std::string label;
  std::string detail;
  if (candidate.num_features != serving.num_features) {
    label = "num_features";
    detail = absl::StrCat("it takes ", candidate.num_features,
                          " features per document, the serving version ",
                          serving.num_features);
  } else if (candidate.num_outputs != serving.num_outputs) {
    label = "num_outputs";
    detail =
        absl::StrCat("it has ", candidate.num_outputs,
                     " outputs, the serving version ", serving.num_outputs);
  } else if (candidate.score_transform != serving.score_transform) {
    label = "score_transform";
    detail = absl::StrCat("its scores are '", candidate.score_transform,
                          "', the serving version's '", serving.score_transform,
                          "'");
  } else {
    return absl::OkStatus();
  }
  if (reason != nullptr) *reason = label;
  return absl::FailedPreconditionError(detail);
}

absl::StatusOr<std::shared_ptr<const ServableVersion>>
LoadServableVersionFromBytes(const std::string& model, int64_t version,
                             const std::string& model_file,
                             const std::string& bytes,
                             ServableVersion::ReleaseHook on_release,
                             const std::string& scoring_kernel) {
  // The load boundary: whatever the file declares, allocation failures end
  // here as a FAILED version instead of terminating the server.
  try {
    // What the version holds once loaded: the allocator's count before and
    // after, once the parsed file and the temporaries are gone.
    const uint64_t before = AllocatedBytes();
    absl::StatusOr<std::shared_ptr<ServableVersion>> loaded =
        LoadUnguarded(model, version, model_file, bytes, std::move(on_release),
                      scoring_kernel);
    if (!loaded.ok()) return loaded.status();
    const uint64_t after = AllocatedBytes();
    (*loaded)->set_memory_bytes(after > before ? after - before : 0);
    return std::shared_ptr<const ServableVersion>(*std::move(loaded));
  } catch (const std::bad_alloc&) {
    return OutOfMemory(model_file, "allocation failed");
  } catch (const std::length_error&) {
    return OutOfMemory(model_file, "size beyond what can be allocated");
  }
}

absl::StatusOr<std::string> ReadModelFileBytes(const std::string& model_file,
                                               uint64_t max_bytes) {
  max_bytes = std::min(max_bytes, kMaxModelFileBytes);
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(model_file, error);
  if (!error && size > max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "model file ", model_file, " is ", size, " bytes, above the limit of ",
        max_bytes, max_bytes == kMaxModelFileBytes
                       ? " (protobuf's message limit)"
                       : " (--max_model_file_bytes)"));
  }
  absl::StatusOr<std::string> bytes;
  try {
    bytes = ReadWholeFile(model_file, static_cast<size_t>(max_bytes));
  } catch (const std::bad_alloc&) {
    return OutOfMemory(model_file, "reading the file");
  } catch (const std::length_error&) {
    return OutOfMemory(model_file, "reading the file");
  }
  if (!bytes.ok()) {
    return absl::Status(bytes.status().code(),
                        absl::StrCat("model file ", bytes.status().message()));
  }
  return bytes;
}

absl::StatusOr<std::shared_ptr<const ServableVersion>> LoadServableVersion(
    const std::string& model, int64_t version, const std::string& model_file,
    ServableVersion::ReleaseHook on_release) {
  absl::StatusOr<std::string> bytes = ReadModelFileBytes(model_file);
  if (!bytes.ok()) return bytes.status();
  return LoadServableVersionFromBytes(model, version, model_file, *bytes,
                                      std::move(on_release));
}

}  // namespace plrank::server
