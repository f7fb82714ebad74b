// plrank-convert: turns an XGBoost 1.7 JSON or UBJSON model or a LightGBM text
// model into a PLRank model artifact, so existing XGBoost and LightGBM rankers
// are served by plrank-server; and writes a tree model (a PLRank artifact or
// either import) as a LightGBM text model (--to_lightgbm).
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <string>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/data/file_io.h"
#include "core/import/lightgbm_export.h"
#include "core/import/lightgbm_import.h"
#include "core/model/model_io.h"
#include "core/import/xgboost_import.h"
#include "trainer/cli/cli_common.h"

ABSL_FLAG(std::string, xgboost_json, "",
          "XGBoost model saved as JSON (Booster.save_model(\"m.json\")) or "
          "UBJSON (save_model(\"m.ubj\")); the format is told from the "
          "bytes.");
ABSL_FLAG(std::string, lightgbm_model, "",
          "LightGBM model saved as text (Booster.save_model(\"m.txt\") or the "
          "CLI's output_model).");
ABSL_FLAG(int32_t, lightgbm_first_feature_column, 1,
          "The LightGBM column that is feature index 1 in LETOR files (0 in "
          "Rank requests); column c becomes file index c - this + 1. 1: "
          "LightGBM read LETOR/LightGBM-form text files, whose indices it "
          "keeps as column numbers (column 0 is empty). 0: LightGBM was "
          "trained on a matrix whose column 0 is a feature.");
ABSL_FLAG(std::string, model_out, "",
          "Where to write the artifact (atomically), e.g. "
          "<base>/<model>/<version>/model.pb.");
ABSL_FLAG(std::string, to_lightgbm, "",
          "Also (or instead) write the model as a LightGBM text model here "
          "(atomically): LightGBM's Booster(model_file=...) and "
          "--lightgbm_model read it back with the same scores. Single-output "
          "tree models only (docs/lightgbm-habits.md).");
ABSL_DECLARE_FLAG(std::string, model);  // trainer/cli/model_flag.cc

int main(int argc, char** argv) {
  plrank::cli::ParseFlagsOrDie(argc, argv,
                               "Converts an XGBoost JSON or UBJSON model or a "
                               "LightGBM text model into a "
                               "PLRank model artifact.\n"
                               "  plrank-convert --xgboost_json=m.json "
                               "--model_out=models/web/3/model.pb\n"
                               "  plrank-convert --lightgbm_model=m.txt "
                               "--model_out=models/web/4/model.pb\n"
                               "  plrank-convert --model=model.pb "
                               "--to_lightgbm=model.txt");
  const std::string xgboost = absl::GetFlag(FLAGS_xgboost_json);
  const std::string lightgbm = absl::GetFlag(FLAGS_lightgbm_model);
  const std::string plrank_model = absl::GetFlag(FLAGS_model);
  const std::string output = absl::GetFlag(FLAGS_model_out);
  const std::string lightgbm_out = absl::GetFlag(FLAGS_to_lightgbm);
  const int inputs = !xgboost.empty() + !lightgbm.empty() + !plrank_model.empty();
  if (inputs != 1 || (output.empty() && lightgbm_out.empty())) {
    return plrank::cli::Fail(absl::InvalidArgumentError(
        "give exactly one of --xgboost_json, --lightgbm_model and --model, "
        "and --model_out and/or --to_lightgbm"));
  }
  // Outputs that cannot be written fail before the conversion.
  for (const std::string* out : {&output, &lightgbm_out}) {
    if (out->empty()) continue;
    if (absl::Status status = plrank::CheckOutputTarget(*out); !status.ok()) {
      return plrank::cli::Fail(status);
    }
  }
  absl::StatusOr<plrank::Ensemble> model;
  if (!xgboost.empty()) {
    model = plrank::ImportXgboostJsonFile(xgboost);
  } else if (!lightgbm.empty()) {
    plrank::LightgbmImportOptions options;
    options.first_feature_column =
        absl::GetFlag(FLAGS_lightgbm_first_feature_column);
    model = plrank::ImportLightgbmModelFile(lightgbm, options);
  } else {
    model = plrank::ReadModelFile(plrank_model);
  }
  if (!model.ok()) return plrank::cli::Fail(model.status());
  if (!lightgbm_out.empty()) {
    absl::StatusOr<std::string> text = plrank::ExportLightgbmModel(*model);
    if (!text.ok()) {
      return plrank::cli::Fail(absl::Status(
          text.status().code(),
          absl::StrCat("--to_lightgbm: ", text.status().message())));
    }
    if (absl::Status status = plrank::WriteFileAtomically(lightgbm_out, *text);
        !status.ok()) {
      return plrank::cli::Fail(status);
    }
    std::printf("wrote %s: LightGBM text model, %zu trees, %d features "
                "(columns 1..%d)\n",
                lightgbm_out.c_str(), model->trees.size(), model->num_features,
                model->num_features);
    if (output.empty()) return 0;
  }
  // The artifact is made now: the server's model age (and its stale-model
  // alert) counts from here, not from 1970.
  model->created_unix_seconds = static_cast<int64_t>(std::time(nullptr));
  const std::filesystem::path parent =
      std::filesystem::path(output).parent_path();
  std::error_code error;
  if (!parent.empty()) std::filesystem::create_directories(parent, error);
  if (absl::Status status = plrank::WriteModelFile(*model, output);
      !status.ok()) {
    return plrank::cli::Fail(status);
  }
  std::printf("wrote %s: %s, %zu trees, %d features, format version %d\n",
              output.c_str(), model->objective.c_str(), model->trees.size(),
              model->num_features, plrank::RequiredFormatVersion(*model));
  return 0;
}
