// plrank-eval: scores a LETOR file with a model and prints ranking metrics,
// optionally against a second model with paired t-tests.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/data/letor_reader.h"
#include "core/metrics/evaluation.h"
#include "core/model/feature_importance.h"
#include "core/scoring/forest_scorer.h"
#include "core/model/model_io.h"
#include "trainer/cli/cli_common.h"
#include "common/data_flags.h"
#include "common/flag_parsing.h"
#include "core/metrics/score_file.h"
#include "trainer/logs/logged_evaluation.h"

ABSL_FLAG(std::string, model, "", "Model artifact (model.pb).");
ABSL_FLAG(std::string, data, "", "LETOR file to score and evaluate.");
ABSL_FLAG(std::string, scores_out, "",
          "Write one score per input line, in input order.");
ABSL_FLAG(std::string, compare_with, "",
          "Second model: adds its metrics and paired t-test p-values.");
ABSL_FLAG(std::string, eval_at, "1,3,5,10", "NDCG cut-offs to report.");
ABSL_FLAG(int32_t, err_max_grade, 0,
          "ERR's maximum grade g: R = (2^label - 1) / 2^g, labels above g "
          "count as g. 0 (default) = the largest label in --data; 4 is what "
          "many tools fix for 0-4 graded data (MSLR, Yahoo).");
ABSL_FLAG(bool, dump, false, "Print a human-readable dump of --model and exit.");
ABSL_FLAG(bool, importance, false,
          "Print --model's feature importance and exit: '#' comment lines, "
          "then 'feature<TAB>gain<TAB>splits<TAB>name', one line per feature "
          "(1-based index, summed split gain or '-' when the model records "
          "none, split count, name or '-'), largest gain first.");

ABSL_FLAG(std::string, logged, "",
          "Counterfactual evaluation: the training file D of plrank-logs "
          "join (reads D.all, D.all.position, D.all.marginals); prints "
          "--model's IPS and SNIPS estimates of expected clicks and "
          "click-DCG under the logging policy (docs/clicks-serving.md)");
ABSL_FLAG(uint32_t, dcg_at, 0,
          "With --logged: the click-DCG cut-off; 0 = every logged position");

namespace {

absl::StatusOr<std::vector<double>> ScoreWith(const plrank::Ensemble& model,
                                              const plrank::Dataset& data) {
  absl::StatusOr<plrank::ForestScorer> scorer =
      plrank::ForestScorer::Create(model);
  if (!scorer.ok()) return scorer.status();
  return scorer->ScoreDataset(data);
}

int Run() {
  const std::string model_path = absl::GetFlag(FLAGS_model);
  if (model_path.empty()) {
    return plrank::cli::Fail(absl::InvalidArgumentError("--model is required"));
  }
  absl::StatusOr<plrank::Ensemble> model = plrank::ReadModelFile(model_path);
  if (!model.ok()) return plrank::cli::Fail(model.status());
  if (absl::GetFlag(FLAGS_dump)) {
    std::fputs(plrank::DumpModel(*model).c_str(), stdout);
    return 0;
  }
  if (absl::GetFlag(FLAGS_importance)) {
    std::fputs(plrank::FormatFeatureImportance(*model).c_str(), stdout);
    return 0;
  }
  if (const std::string logged = absl::GetFlag(FLAGS_logged);
      !logged.empty()) {
    const size_t dcg_at = absl::GetFlag(FLAGS_dcg_at);
    absl::StatusOr<plrank::CounterfactualEstimate> estimate =
        plrank::logs::EvaluateLogged(logged, *model, dcg_at);
    if (!estimate.ok()) return plrank::cli::Fail(estimate.status());
    std::fputs(
        plrank::logs::FormatLoggedEstimate(logged, *estimate, dcg_at).c_str(),
        stdout);
    return 0;
  }
  const std::string data_path = absl::GetFlag(FLAGS_data);
  if (data_path.empty()) {
    return plrank::cli::Fail(absl::InvalidArgumentError("--data is required"));
  }
  absl::StatusOr<plrank::ReadOptions> read_options =
      plrank::cli::ReadOptionsFromFlags();
  if (!read_options.ok()) return plrank::cli::Fail(read_options.status());
  absl::StatusOr<plrank::MetricOptions> metric_options =
      plrank::cli::MetricOptionsFromFlags();
  if (!metric_options.ok()) return plrank::cli::Fail(metric_options.status());
  metric_options->max_grade = absl::GetFlag(FLAGS_err_max_grade);
  if (metric_options->max_grade < 0 || metric_options->max_grade > 31) {
    return plrank::cli::Fail(absl::InvalidArgumentError(absl::StrCat(
        "--err_max_grade=", metric_options->max_grade,
        " is not in 0..31 (0 = the data's largest label)")));
  }
  absl::StatusOr<std::vector<int32_t>> cutoffs =
      plrank::cli::ParseCutoffs(absl::GetFlag(FLAGS_eval_at));
  if (!cutoffs.ok()) return plrank::cli::Fail(cutoffs.status());

  // The model fixes the width: an index beyond it means the file does not
  // match the model, which the reader reports with file and line.
  std::optional<plrank::Ensemble> other;
  if (const std::string other_path = absl::GetFlag(FLAGS_compare_with);
      !other_path.empty()) {
    absl::StatusOr<plrank::Ensemble> loaded = plrank::ReadModelFile(other_path);
    if (!loaded.ok()) return plrank::cli::Fail(loaded.status());
    other = *std::move(loaded);
  }
  if (read_options->num_features == 0) {
    read_options->num_features = model->num_features;
    read_options->num_features_origin =
        absl::StrCat("the feature count of model ", model_path);
    if (other && other->num_features > model->num_features) {
      read_options->num_features = other->num_features;
      read_options->num_features_origin = absl::StrCat(
          "the feature count of model ", absl::GetFlag(FLAGS_compare_with));
    }
  }
  plrank::ReadStats read_stats;
  absl::StatusOr<plrank::Dataset> data =
      plrank::ReadLetorFile(data_path, *read_options, &read_stats);
  if (!data.ok()) return plrank::cli::Fail(data.status());
  if (const std::string note =
          plrank::DuplicateFeaturesNote(data_path, read_stats);
      !note.empty()) {
    std::fprintf(stderr, "plrank-eval: %s\n", note.c_str());
  }
  if (data->num_documents() == 0) {
    return plrank::cli::Fail(absl::InvalidArgumentError(
        absl::StrCat(data_path, ": the dataset has no documents")));
  }

  absl::StatusOr<std::vector<double>> scores = ScoreWith(*model, *data);
  if (!scores.ok()) return plrank::cli::Fail(scores.status());
  std::vector<plrank::MetricSpec> specs;
  for (int32_t k : *cutoffs) {
    specs.push_back({plrank::MetricSpec::Kind::kNdcg, k});
  }
  specs.push_back({plrank::MetricSpec::Kind::kErr, 0});
  specs.push_back({plrank::MetricSpec::Kind::kMap, 0});
  const plrank::EvaluationReport report =
      plrank::Evaluate(*data, *scores, specs, *metric_options);

  std::optional<plrank::EvaluationReport> other_report;
  if (other) {
    absl::StatusOr<std::vector<double>> other_scores = ScoreWith(*other, *data);
    if (!other_scores.ok()) return plrank::cli::Fail(other_scores.status());
    other_report =
        plrank::Evaluate(*data, *other_scores, specs, *metric_options);
  }
  std::printf("%s: %zu queries, %zu documents\n", data_path.c_str(),
              data->num_queries(), data->num_documents());
  std::fputs(plrank::FormatMetricsTable(
                 report, other_report ? &*other_report : nullptr)
                 .c_str(),
             stdout);

  if (const std::string out = absl::GetFlag(FLAGS_scores_out); !out.empty()) {
    if (absl::Status status = plrank::WriteScoresInInputOrder(
            *data, *scores, out);
        !status.ok()) {
      return plrank::cli::Fail(status);
    }
    std::printf("wrote %zu scores to %s\n", scores->size(), out.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  plrank::cli::ParseFlagsOrDie(
      argc, argv,
      "Evaluates a model on a LETOR file.\n  plrank-eval --model=model.pb "
      "--data=test.txt [--scores_out=F] [--compare_with=other.pb]\n"
      "  plrank-eval --model=model.pb --dump | --importance\n"
      "  plrank-eval --model=candidate.pb --logged=D [--dcg_at=K]");
  return plrank::cli::RunOrFailOnOutOfMemory(Run);
}
