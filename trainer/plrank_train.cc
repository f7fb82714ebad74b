// plrank-train: fits a gradient-boosted ranking model (PLRank by default)
// on LETOR files and writes the model artifact atomically. Its flags are
// defined in trainer/train_options.cc.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/flags/internal/parse.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/boosting/reducer.h"
#include "core/pipeline/train_job.h"
#include "trainer/cli/cli_common.h"
#include "trainer/train_options.h"
#ifdef PLRANK_WITH_MPI
#include "trainer/distributed/mpi_reducer.h"
#endif

ABSL_DECLARE_FLAG(std::string, train);
ABSL_DECLARE_FLAG(std::string, model_out);
ABSL_DECLARE_FLAG(bool, quiet);

namespace {

bool WasGiven(absl::string_view flag) {
  return absl::flags_internal::WasPresentOnCommandLine(flag);
}

}  // namespace

int main(int argc, char** argv) {
  // Under mpirun (and only then) MPI is initialised before the flags are
  // parsed, as MPI_Init may edit argv.
  std::unique_ptr<plrank::Reducer> reducer;
#ifdef PLRANK_WITH_MPI
  plrank::distributed::MpiReducer* mpi = nullptr;
  if (plrank::distributed::LaunchedByMpi()) {
    std::unique_ptr<plrank::distributed::MpiReducer> created =
        plrank::distributed::MpiReducer::Create(&argc, &argv);
    mpi = created.get();
    reducer = std::move(created);
  }
#endif
  plrank::cli::ParseFlagsOrDie(
      argc, argv,
      "Trains a ranking model.\n  plrank-train --train=F [--valid=F] "
      "--model_out=model.pb [flags]\n"
#ifdef PLRANK_WITH_MPI
      "Distributed (data-parallel by query, tree objectives only; the linear "
      "rankers ca and listmle train single-process):\n"
      "  mpirun -np N plrank-train --train=F ... (each rank reads only its "
      "share: its byte range of F, cut at query starts, or its own file when "
      "F holds {rank}, e.g. --train=part-{rank}-of-{ranks}.txt; rank 0 "
      "writes the model and checkpoints)"
#else
      "Single-process only: this build has no MPI (docs/distributed.md)"
#endif
  );
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
    if (absl::GetFlag(FLAGS_model_out).empty()) {
      return plrank::cli::Fail(
          absl::InvalidArgumentError("--model_out is required"));
    }
    absl::StatusOr<plrank::TrainJob> job =
        plrank::cli::TrainJobFromFlags(WasGiven);
    if (!job.ok()) return plrank::cli::Fail(job.status());
    job->reducer = reducer.get();
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
#ifdef PLRANK_WITH_MPI
    if (mpi != nullptr && mpi->num_ranks() > 1) {
      // Rank 0's: every rank sends the same amount; the reduce seconds
      // include waiting for slower ranks.
      std::printf("distributed_bytes_sent_per_iteration=%.0f\n"
                  "distributed_reduce_seconds=%.3f\n",
                  summary->iterations > 0
                      ? static_cast<double>(mpi->bytes_sent()) /
                            summary->iterations
                      : 0.0,
                  mpi->seconds_in_sum());
    }
#endif
    return 0;
  });
#ifdef PLRANK_WITH_MPI
  // A failed rank ends every rank (non-zero), so no rank waits forever in a
  // collective and rank 0 never gets to write a model.
  if (code != 0 && mpi != nullptr && num_ranks > 1) mpi->Abort(code);
#endif
  std::fflush(stdout);
  reducer.reset();  // MPI_Finalize
  return code;
}
