// plrank-train: fits a gradient-boosted ranking model (PLRank by default)
// on LETOR files and writes the model artifact atomically. Its flags are
// defined in trainer/train_options.cc.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_format.h"
#include "core/boosting/reducer.h"
#include "core/data/file_io.h"
#include "core/pipeline/propensity_estimation.h"
#include "core/pipeline/train_job.h"
#include "trainer/cli/cli_common.h"
#include "trainer/distributed/launch.h"
#include "trainer/train_options.h"

ABSL_DECLARE_FLAG(std::string, train);
ABSL_DECLARE_FLAG(std::string, model_out);
ABSL_DECLARE_FLAG(bool, quiet);
ABSL_DECLARE_FLAG(std::string, estimate_propensities);

namespace {

bool WasGiven(absl::string_view flag) {
  return plrank::cli::FlagWasGiven(flag);
}

// --estimate_propensities=FILE: regression-EM on --train's clicks, printed
// and written (one propensity per line, position 1 first; '#' lines are
// comments the side-file and flag readers skip).
int EstimatePropensitiesAndExit(const plrank::TrainJob& job) {
  const std::string out = absl::GetFlag(FLAGS_estimate_propensities);
  if (absl::Status target = plrank::CheckOutputTarget(out); !target.ok()) {
    return plrank::cli::Fail(target);
  }
  absl::StatusOr<plrank::TrainData> data = plrank::LoadTrainData(
      job, [](const std::string& line) { std::printf("%s\n", line.c_str()); });
  if (!data.ok()) return plrank::cli::Fail(data.status());
  absl::StatusOr<plrank::PropensityCurve> curve =
      plrank::EstimatePropensities(data->train);
  if (!curve.ok()) return plrank::cli::Fail(curve.status());
  std::string text = absl::StrFormat(
      "# examination propensity by display position (regression-EM, "
      "position-based model), relative to position 1; from %s\n",
      job.train_path);
  std::printf("position propensity shown clicks\n");
  for (size_t k = 0; k < curve->theta.size(); ++k) {
    std::printf("%zu %.6f %lld %lld\n", k + 1, curve->theta[k],
                static_cast<long long>(curve->shown[k]),
                static_cast<long long>(curve->clicks[k]));
    absl::StrAppendFormat(&text, "%.6f\n", curve->theta[k]);
  }
  std::printf("--position_propensities=%s\n",
              plrank::FormatCurve(curve->theta).c_str());
  if (absl::Status s = plrank::WriteFileAtomically(out, text); !s.ok()) {
    return plrank::cli::Fail(s);
  }
  std::printf("wrote %s\n", out.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Under mpirun (and only then) MPI is initialised before the flags are
  // parsed, as MPI_Init may edit argv.
  std::unique_ptr<plrank::distributed::Launch> launch =
      plrank::distributed::Launch::Start(&argc, &argv);
  plrank::Reducer* const reducer = launch->reducer();
  plrank::cli::ParseFlagsAndKeyValuesOrDie(
      argc, argv,
      "Trains a ranking model.\n  plrank-train --train=F [--valid=F] "
      "--model_out=model.pb [flags]\n"
      "  plrank-train config=train.conf [key=value ...] (LightGBM style)\n" +
          plrank::distributed::LaunchUsage(),
      plrank::cli::TrainFlagNames());
  const int32_t rank = reducer ? reducer->rank() : 0;
  const int32_t num_ranks = reducer ? reducer->num_ranks() : 1;
  if (reducer) {
    if (rank == 0) {
      std::printf("distributed: %d ranks\n", num_ranks);
      std::fflush(stdout);
    }
    plrank::cli::SetProgramName(absl::StrCat(
        plrank::cli::ProgramNameForMessages(), " (rank ", rank, " of ",
        num_ranks, ")"));
  }
  const int code = plrank::cli::RunOrFailOnOutOfMemory([&] {
    if (absl::GetFlag(FLAGS_train).empty()) {
      return plrank::cli::Fail(
          absl::InvalidArgumentError("--train is required"));
    }
    if (!absl::GetFlag(FLAGS_estimate_propensities).empty()) {
      absl::StatusOr<plrank::TrainJob> job =
          plrank::cli::TrainJobFromFlags(WasGiven);
      if (!job.ok()) return plrank::cli::Fail(job.status());
      return EstimatePropensitiesAndExit(*job);
    }
    if (absl::GetFlag(FLAGS_model_out).empty()) {
      return plrank::cli::Fail(
          absl::InvalidArgumentError("--model_out is required"));
    }
    absl::StatusOr<plrank::TrainJob> job =
        plrank::cli::TrainJobFromFlags(WasGiven);
    if (!job.ok()) return plrank::cli::Fail(job.status());
    job->reducer = reducer;
    if (rank != 0) {
      // The same lines as rank 0's: say them once.
    } else if (const std::vector<std::string> ignored =
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
    // Ranks other than 0 print only errors (and their own rank's line).
    const bool quiet = absl::GetFlag(FLAGS_quiet);
    absl::StatusOr<plrank::TrainSummary> summary =
        plrank::RunTrainJob(*job, [quiet, rank](const std::string& line) {
          if (rank != 0) return;
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
    if (rank != 0) return 0;
    std::printf("load_seconds=%.3f\ntrain_seconds=%.3f\n",
                summary->load_seconds, summary->train_seconds);
    std::printf("%s", launch->RunStats(summary->iterations).c_str());
    return 0;
  });
  // A failed rank ends every rank (non-zero), so no rank waits forever in a
  // collective and rank 0 never gets to write a model.
  launch->EndIfFailed(code);
  std::fflush(stdout);
  launch.reset();  // MPI_Finalize
  return code;
}
