// plrank-convert: turns an XGBoost 1.7 JSON model into a PLRank model
// artifact, so existing XGBoost rankers are served by plrank-server.
#include <cstdio>
#include <filesystem>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "core/model/model_io.h"
#include "core/model/xgboost_import.h"
#include "trainer/cli/cli_common.h"

ABSL_FLAG(std::string, xgboost_json, "",
          "XGBoost model saved as JSON (Booster.save_model(\"m.json\")).");
ABSL_FLAG(std::string, model_out, "",
          "Where to write the artifact (atomically), e.g. "
          "<base>/<model>/<version>/model.pb.");

int main(int argc, char** argv) {
  plrank::cli::ParseFlagsOrDie(
      argc, argv,
      "Converts an XGBoost JSON model into a PLRank model artifact.\n"
      "  plrank-convert --xgboost_json=m.json --model_out=models/web/3/model.pb");
  const std::string input = absl::GetFlag(FLAGS_xgboost_json);
  const std::string output = absl::GetFlag(FLAGS_model_out);
  if (input.empty() || output.empty()) {
    return plrank::cli::Fail(absl::InvalidArgumentError(
        "--xgboost_json and --model_out are required"));
  }
  absl::StatusOr<plrank::Ensemble> model = plrank::ImportXgboostJsonFile(input);
  if (!model.ok()) return plrank::cli::Fail(model.status());
  const std::filesystem::path parent =
      std::filesystem::path(output).parent_path();
  std::error_code error;
  if (!parent.empty()) std::filesystem::create_directories(parent, error);
  if (absl::Status status = plrank::WriteModelFile(*model, output);
      !status.ok()) {
    return plrank::cli::Fail(status);
  }
  std::printf("wrote %s: %s, %zu trees, %d features\n", output.c_str(),
              model->objective.c_str(), model->trees.size(),
              model->num_features);
  return 0;
}
