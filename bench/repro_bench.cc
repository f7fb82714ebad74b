// plrank-repro: reproduces the comparison of Xia, Zhai & Wang (PLRank) on
// LETOR folds. Every system is trained by plrank-train on each fold's train
// part (same trees, leaves and learning rate; no early stopping, so the
// validation part is unused) and scored by plrank-eval on the test part.
// Prints the layouts of the paper's Table 1 (test NDCG@1/3/10 and ERR with
// significance marks), Table 3 (PLRank(obj=m) context compression) and
// Table 4 (training time relative to MART-2). With --feature_sweep it runs
// the paper's Fig. 2 instead: the linear rankers on the first N features.
//
//   /work/shared/data/make-folds.sh /tmp/mq && plrank-repro --folds_dir=/tmp/mq
//   plrank-repro --folds_dir=/tmp/mq --feature_sweep=5,10,20 --sweep_out=f.json

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "bench/repro_lib.h"
#include "bench/repro_report.h"
#include "bench/repro_sweep.h"
#include "bench/repro_systems.h"
#include "bench/train_flag.h"
#include "common/program.h"
#include "core/data/file_io.h"

ABSL_FLAG(std::string, folds_dir, "",
          "directory of Fold<N>/{train,test}.txt (make them with "
          "shared/data/make-folds.sh DIR)");
ABSL_FLAG(std::string, systems, "all",
          "comma-separated systems: plrank<m>, lambdamart, mcrank, mart1, "
          "mart2, cmart1, cosmart, ccosmart, klmart, cklmart, ca, listmle; "
          "'all' = plrank1,plrank3 and the eleven others");
PLRANK_BENCH_TRAIN_FLAG(trees, 100, "boosting iterations of every tree system");
PLRANK_BENCH_TRAIN_FLAG(leaves, 31, "leaves per tree");
PLRANK_BENCH_TRAIN_FLAG(learning_rate, 0.1, "shrinkage");
ABSL_FLAG(
    double, mcrank_trees_factor, 2.5,
    "McRank trains round(trees x this) iterations (the paper: 2500 vs 1000)");
ABSL_FLAG(int32_t, max_folds, 0, "use only the first N folds (0 = all)");
PLRANK_BENCH_TRAIN_FLAG(num_threads, 2, "threads of every training run");
PLRANK_BENCH_TRAIN_FLAG(seed, 1, "seed of every training run");
ABSL_FLAG(std::string, reference, "plrank1",
          "Table 1 marks significant differences from this system");
ABSL_FLAG(std::string, obj_list, "3,6,9,12,15,18,21",
          "Table 3: the m of PLRank(obj=m) ('' = no Table 3)");
ABSL_FLAG(std::string, json_out, "", "also write the results as JSON here");
ABSL_FLAG(std::string, csv_out, "", "also write the results as CSV here");
ABSL_FLAG(std::string, bin_dir, "",
          "where plrank-train and plrank-eval are (default: this program's "
          "directory)");
ABSL_FLAG(std::string, work_dir, "",
          "parent of the scratch directory, created when missing (default "
          "$TMPDIR or /tmp)");
ABSL_FLAG(bool, keep_work_dir, false, "keep models, scores and logs");
ABSL_FLAG(std::string, feature_sweep, "",
          "the paper's Fig. 2 instead of the tables: comma-separated feature "
          "counts N, e.g. 5,10,20,40; each system (--systems, here by default "
          "listmle,ca) is trained on the first N features of each fold's "
          "train part and scored by test NDCG@10");
ABSL_FLAG(std::string, sweep_out, "",
          "--feature_sweep: write the results as JSON here (plrank-plot fig2 "
          "draws it)");

namespace plrank::bench {
namespace {

std::string DefaultBinDir() {
  std::error_code error;
  std::filesystem::path self =
      std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string(".") : self.parent_path().string();
}

bool WriteFile(const std::string& path, const std::string& text) {
  const absl::Status status = WriteFileAtomically(path, text);
  if (status.ok()) return true;
  std::fprintf(stderr, "plrank-repro: %s\n",
               std::string(status.message()).c_str());
  return false;
}

// --feature_sweep: Fig. 2 instead of the tables.
int Sweep(const ReproConfig& config, const std::string& list) {
  absl::StatusOr<std::vector<int>> counts = ParsePositiveIntList(list);
  if (counts.ok() && counts->empty()) {
    counts = absl::InvalidArgumentError("--feature_sweep lists no count");
  }
  if (!counts.ok()) {
    std::fprintf(stderr, "plrank-repro: --feature_sweep: %s\n",
                 std::string(counts.status().message()).c_str());
    return 2;
  }
  const std::string out = absl::GetFlag(FLAGS_sweep_out);
  if (!out.empty()) {
    if (absl::Status target = CheckOutputTarget(out); !target.ok()) {
      std::fprintf(stderr, "plrank-repro: %s\n",
                   std::string(target.message()).c_str());
      return 2;
    }
  }
  absl::StatusOr<SweepResults> results = RunFeatureSweep(config, *counts);
  if (!results.ok()) {
    std::fprintf(stderr, "plrank-repro: %s\n",
                 std::string(results.status().message()).c_str());
    return 1;
  }
  std::fputs(FormatSweepReport(*results).c_str(), stdout);
  bool written = true;
  if (!out.empty()) {
    written = WriteFile(out, SweepJson(*results));
    if (written) std::printf("wrote %s\n", out.c_str());
  }
  return results->ok() && written ? 0 : 1;
}

int Main() {
  ReproConfig config;
  config.folds_dir = absl::GetFlag(FLAGS_folds_dir);
  if (config.folds_dir.empty()) {
    std::fprintf(stderr,
                 "plrank-repro: --folds_dir is required, e.g.\n"
                 "  shared/data/make-folds.sh /tmp/mq && plrank-repro "
                 "--folds_dir=/tmp/mq\n");
    return 2;
  }
  const std::string sweep = absl::GetFlag(FLAGS_feature_sweep);
  std::string system_list = absl::GetFlag(FLAGS_systems);
  if (!sweep.empty() && system_list == "all") system_list = "listmle,ca";
  absl::StatusOr<std::vector<ReproSystem>> systems =
      ParseReproSystems(system_list);
  absl::StatusOr<std::vector<int>> obj_list =
      ParsePositiveIntList(absl::GetFlag(FLAGS_obj_list));
  for (const absl::Status& status : {systems.status(), obj_list.status()}) {
    if (!status.ok()) {
      std::fprintf(stderr, "plrank-repro: %s\n",
                   std::string(status.message()).c_str());
      return 2;
    }
  }
  config.systems = *systems;
  config.obj_list = *obj_list;
  config.trees = absl::GetFlag(FLAGS_trees);
  config.leaves = absl::GetFlag(FLAGS_leaves);
  config.learning_rate = absl::GetFlag(FLAGS_learning_rate);
  config.mcrank_trees_factor = absl::GetFlag(FLAGS_mcrank_trees_factor);
  config.max_folds = absl::GetFlag(FLAGS_max_folds);
  config.num_threads = absl::GetFlag(FLAGS_num_threads);
  config.seed = absl::GetFlag(FLAGS_seed);
  config.reference = absl::GetFlag(FLAGS_reference);
  config.bin_dir = absl::GetFlag(FLAGS_bin_dir);
  if (config.bin_dir.empty()) config.bin_dir = DefaultBinDir();
  config.work_dir = absl::GetFlag(FLAGS_work_dir);
  config.keep_work_dir = absl::GetFlag(FLAGS_keep_work_dir);
  if (config.trees < 1 || config.leaves < 2 ||
      config.mcrank_trees_factor <= 0 || config.num_threads < 0) {
    std::fprintf(stderr,
                 "plrank-repro: need --trees >= 1, --leaves >= 2, "
                 "--mcrank_trees_factor > 0, --num_threads >= 0\n");
    return 2;
  }
  config.progress = [](std::string_view line) {
    std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data());
    std::fflush(stderr);
  };

  if (!sweep.empty()) return Sweep(config, sweep);
  absl::StatusOr<ReproResults> results = RunRepro(config);
  if (!results.ok()) {
    std::fprintf(stderr, "plrank-repro: %s\n",
                 std::string(results.status().message()).c_str());
    return 1;
  }
  std::fputs(FormatReproReport(*results).c_str(), stdout);
  bool written = true;
  if (const std::string path = absl::GetFlag(FLAGS_json_out); !path.empty()) {
    written &= WriteFile(path, ReproJson(*results));
  }
  if (const std::string path = absl::GetFlag(FLAGS_csv_out); !path.empty()) {
    written &= WriteFile(path, ReproCsv(*results));
  }
  return results->ok() && written ? 0 : 1;
}

}  // namespace
}  // namespace plrank::bench

int main(int argc, char** argv) {
  std::vector<char*> rest = plrank::ParseProgramFlags(
      argc, argv,
      "Reproduces the PLRank paper's Tables 1, 3 and 4 (or Fig. 2) on LETOR "
      "folds.\n"
      "  plrank-repro --folds_dir=DIR [--systems=all] [--trees=100] ...\n"
      "  plrank-repro --folds_dir=DIR --feature_sweep=5,10,20,40 "
      "[--sweep_out=fig2.json]");
  if (rest.size() > 1) {
    std::fprintf(stderr, "plrank-repro: unexpected argument %s\n", rest[1]);
    return 2;
  }
  return plrank::bench::Main();
}
