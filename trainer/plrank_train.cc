// plrank-train: fits a gradient-boosted ranking model (PLRank by default)
// on LETOR files and writes the model artifact atomically. Its flags are
// defined in trainer/train_options.cc.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/flags/internal/parse.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "core/pipeline/train_job.h"
#include "trainer/cli/cli_common.h"
#include "trainer/train_options.h"

ABSL_DECLARE_FLAG(std::string, train);
ABSL_DECLARE_FLAG(std::string, model_out);
ABSL_DECLARE_FLAG(bool, quiet);

namespace {

bool WasGiven(absl::string_view flag) {
  return absl::flags_internal::WasPresentOnCommandLine(flag);
}

}  // namespace

int main(int argc, char** argv) {
  plrank::cli::ParseFlagsOrDie(
      argc, argv,
      "Trains a ranking model.\n  plrank-train --train=F [--valid=F] "
      "--model_out=model.pb [flags]");
  return plrank::cli::RunOrFailOnOutOfMemory([] {
    if (absl::GetFlag(FLAGS_train).empty()) {
      return plrank::cli::Fail(
          absl::InvalidArgumentError("--train is required"));
    }
    if (absl::GetFlag(FLAGS_model_out).empty()) {
      return plrank::cli::Fail(
          absl::InvalidArgumentError("--model_out is required"));
    }
    absl::StatusOr<plrank::TrainJob> job =
        plrank::cli::TrainJobFromFlags(WasGiven);
    if (!job.ok()) return plrank::cli::Fail(job.status());
    if (const std::vector<std::string> ignored =
            plrank::cli::IgnoredTrainFlags(job->objective.name, WasGiven);
        !ignored.empty()) {
      const std::string why =
          plrank::IsLinearObjective(job->objective.name)
              ? std::string(" (it trains a linear model, not trees)")
              : " (flags of the linear rankers " +
                    absl::StrJoin(plrank::LinearObjectives(), " and ") + ")";
      std::fprintf(stderr, "plrank-train: note: --objective=%s ignores %s%s\n",
                   job->objective.name.c_str(),
                   absl::StrJoin(ignored, ", ").c_str(), why.c_str());
    }
    const bool quiet = absl::GetFlag(FLAGS_quiet);
    absl::StatusOr<plrank::TrainSummary> summary =
        plrank::RunTrainJob(*job, [quiet](const std::string& line) {
          // Warnings reach the user even with --quiet, on stderr.
          if (absl::StartsWith(line, "warning: ")) {
            std::fprintf(stderr, "plrank-train: %s\n", line.c_str());
            return;
          }
          if (!quiet) std::printf("%s\n", line.c_str());
          std::fflush(stdout);
        });
    if (!summary.ok()) return plrank::cli::Fail(summary.status());
    // Machine-readable timings, printed even with --quiet (benchmarks read
    // them).
    std::printf("load_seconds=%.3f\ntrain_seconds=%.3f\n",
                summary->load_seconds, summary->train_seconds);
    return 0;
  });
}
