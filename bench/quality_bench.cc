// plrank-bench-quality: ranking quality of PLRank variants against peers
// (LambdaMART, XGBoost rank:ndcg / rank:pairwise) over real sets (MQ2008,
// ClueWeb09 and table2018 folds, the LightGBM example) and generated regimes
// (small, mslr, many_relevant, sparse, graded_ties; several seeds), every system with the same trees,
// leaves, learning rate, minimum leaf size, bins and threads. Writes a
// markdown report (summary + one table per set) and a JSON twin.
//
//   plrank-bench-quality --out=bench/results/quality.md
//   plrank-bench-quality --sets=mslr,sparse --plrank_variants='default=;paper=--pl_paper'

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/child_process.h"
#include "bench/quality_report.h"
#include "bench/quality_run.h"
#include "bench/train_flag.h"
#include "common/program.h"
#include "core/data/file_io.h"

ABSL_FLAG(std::string, sets,
          "mq2008,lightgbm,clueweb09,table2018,small,mslr,many_relevant,"
          "sparse,graded_ties",
          "data sets, comma-separated: real sets mq2008, clueweb09, "
          "table2018 (5 folds each), lightgbm (the LightGBM lambdarank "
          "example), and plrank-datagen regimes small (100 queries, at least "
          "10 seeds, real-set settings), mslr, many_relevant, sparse, "
          "graded_ties (the default sets), long_binary, short_graded, "
          "deep_graded, short_binary");
ABSL_FLAG(std::string, plrank_variants, "PLRank (default)=;PLRank (paper)=--pl_paper",
          "PLRank variants 'name=flags;name=flags': each runs plrank-train "
          "--objective=plrank <common flags> <flags>; a name ends at the "
          "first '=' followed by '-', a blank or the end");
ABSL_FLAG(std::string, systems, "lambdamart,xgb_ndcg,xgb_pairwise",
          "peers, comma-separated: xgb_ndcg, xgb_pairwise (plrank-xgb-peer; "
          "skipped with a note when not built), xgb_ndcg_defaults, "
          "xgb_pairwise_defaults (the same at XGBRanker's own defaults: "
          "depth 6, eta 0.3; only the tree count is the benchmark's) or a "
          "plrank-train objective "
          "(lambdamart, mart2, mcrank, ...)");
ABSL_FLAG(std::string, candidate, "",
          "the system every other is tested against (default: the first "
          "PLRank variant)");
ABSL_FLAG(int32_t, seeds, 3, "generated sets: how many data seeds");
ABSL_FLAG(int32_t, first_seed, 1,
          "generated sets: the first data seed (seeds first..first+N-1); "
          "tune variants on seeds other than the reported 1..3");
ABSL_FLAG(int32_t, mq2008_folds, 5, "real 5-fold sets (mq2008, clueweb09, table2018): use the first N "
          "folds (1..5)");
ABSL_FLAG(int32_t, gen_queries, 0,
          "generated sets: queries per seed (0: 1500, many_relevant 800, "
          "long_binary 300, deep_graded 600, short_graded 3000, "
          "short_binary 6000)");
ABSL_FLAG(std::string, gen_flags, "",
          "generated sets: more plrank-datagen flags, space-separated, after "
          "--regime (so they override its presets; --queries, --seed and "
          "--out_prefix stay the benchmark's), e.g. '--noise=1.6' to "
          "see which system overfits noisy labels or '--mean_docs=70 "
          "--features=80' for another shape");
PLRANK_BENCH_TRAIN_FLAG(trees, 0, "trees (0: 100 on real sets, 300 on generated)");
PLRANK_BENCH_TRAIN_FLAG(leaves, 31, "leaves per tree");
PLRANK_BENCH_TRAIN_FLAG(learning_rate, 0.1, "shrinkage");
ABSL_FLAG(bool, plrank_auto_learning_rate, false,
          "give the PLRank variants no --learning_rate, so that plrank-train "
          "picks its own (auto: 0.1 below 50,000 training documents, else "
          "20 / trees within [0.1, 0.2]); the peers keep --learning_rate. "
          "With --systems=xgb_pairwise_defaults,xgb_ndcg_defaults and "
          "--trees=100 --min_data_in_leaf=20: each tool at its own defaults");
PLRANK_BENCH_TRAIN_FLAG(min_data_in_leaf, 0,
          "plrank-train --min_data_in_leaf (0: 5 on real sets, 20 on "
          "generated; XGBoost has no such setting)");
PLRANK_BENCH_TRAIN_FLAG(max_bin, 255, "histogram bins per feature");
PLRANK_BENCH_TRAIN_FLAG(num_threads, 2, "threads of every training run");
ABSL_FLAG(int32_t, jobs, 1, "training runs at the same time");
ABSL_FLAG(std::string, bin_dir, "",
          "where plrank-train, plrank-eval, plrank-datagen and plrank-xgb-peer "
          "are (default: this program's directory)");
ABSL_FLAG(std::string, shared_data, PLRANK_DEFAULT_SHARED_DATA,
          "read-only data: MQ2008/, lightgbm-example/, make-folds.sh");
ABSL_FLAG(std::string, source_dir, PLRANK_DEFAULT_SOURCE_DIR,
          "checkout whose git commit the report names");
ABSL_FLAG(std::string, work_dir, "",
          "parent of the scratch directory, created when missing (default "
          "$TMPDIR or /tmp)");
ABSL_FLAG(bool, keep_work_dir, false, "keep data, models, scores and logs");
ABSL_FLAG(std::string, out, "", "write the markdown report here (and print it)");
ABSL_FLAG(std::string, json_out, "",
          "write the JSON results here (default: --out with .md -> .json)");

namespace plrank::bench {
namespace {

namespace fs = std::filesystem;

std::string ProgramDir() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? std::string(".") : self.parent_path().string();
}

std::string ShellQuote(const std::string& arg) {
  if (!arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                            "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "0123456789-_=./,:@%+") ==
                          std::string::npos) {
    return arg;
  }
  std::string quoted = "'";
  for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// "abc1234" plus a note when tracked files differ from it: the report must
// say when results come from uncommitted code.
std::string GitCommit(const std::string& source_dir, const std::string& scratch) {
  std::string git;
  for (absl::string_view dir : absl::StrSplit(getenv("PATH") ? getenv("PATH") : "", ':')) {
    const std::string candidate = absl::StrCat(dir, "/git");
    if (!dir.empty() && access(candidate.c_str(), X_OK) == 0) {
      git = candidate;
      break;
    }
  }
  if (git.empty()) return "unknown (no git)";
  absl::StatusOr<ChildRun> head = RunChild(
      {git, "-C", source_dir, "rev-parse", "--short", "HEAD"}, scratch + ".out", scratch + ".err");
  if (!head.ok() || head->exit_code != 0) return "unknown";
  std::string commit(absl::StripAsciiWhitespace(head->stdout_text));
  absl::StatusOr<ChildRun> status =
      RunChild({git, "-C", source_dir, "status", "--porcelain", "--untracked-files=no"},
               scratch + ".out", scratch + ".err");
  fs::remove(scratch + ".out");
  fs::remove(scratch + ".err");
  if (status.ok() && status->exit_code == 0) {
    const int changed = std::count(status->stdout_text.begin(),
                                   status->stdout_text.end(), '\n');
    if (changed > 0) {
      absl::StrAppend(&commit, " + uncommitted changes in ", changed,
                      " tracked file(s)");
    }
  }
  return commit;
}

bool WriteText(const std::string& path, const std::string& text) {
  const absl::Status status = WriteFileAtomically(path, text);
  if (status.ok()) return true;
  std::fprintf(stderr, "plrank-bench-quality: %s\n",
               std::string(status.message()).c_str());
  return false;
}

int Main(int argc, char** argv) {
  QualityConfig config;
  for (absl::string_view set :
       absl::StrSplit(absl::GetFlag(FLAGS_sets), ',', absl::SkipEmpty())) {
    config.sets.emplace_back(absl::StripAsciiWhitespace(set));
  }
  absl::StatusOr<std::vector<QualitySystem>> variants =
      ParsePlrankVariants(absl::GetFlag(FLAGS_plrank_variants));
  absl::StatusOr<std::vector<QualitySystem>> peers =
      ParsePeerSystems(absl::GetFlag(FLAGS_systems));
  for (const absl::Status& status : {variants.status(), peers.status()}) {
    if (!status.ok()) {
      std::fprintf(stderr, "plrank-bench-quality: %s\n",
                   std::string(status.message()).c_str());
      return 2;
    }
  }
  config.systems = *variants;
  config.systems.insert(config.systems.end(), peers->begin(), peers->end());
  config.candidate = absl::GetFlag(FLAGS_candidate);
  config.data.bin_dir = absl::GetFlag(FLAGS_bin_dir);
  if (config.data.bin_dir.empty()) config.data.bin_dir = ProgramDir();
  config.data.shared_data_dir = absl::GetFlag(FLAGS_shared_data);
  config.data.seeds = absl::GetFlag(FLAGS_seeds);
  config.data.first_seed = absl::GetFlag(FLAGS_first_seed);
  config.data.mq2008_folds = absl::GetFlag(FLAGS_mq2008_folds);
  config.data.gen_queries = absl::GetFlag(FLAGS_gen_queries);
  config.data.gen_flags =
      absl::StrSplit(absl::GetFlag(FLAGS_gen_flags), ' ', absl::SkipEmpty());
  config.trees = absl::GetFlag(FLAGS_trees);
  config.leaves = absl::GetFlag(FLAGS_leaves);
  config.learning_rate = absl::GetFlag(FLAGS_learning_rate);
  config.plrank_auto_learning_rate =
      absl::GetFlag(FLAGS_plrank_auto_learning_rate);
  config.min_data_in_leaf = absl::GetFlag(FLAGS_min_data_in_leaf);
  config.max_bin = absl::GetFlag(FLAGS_max_bin);
  config.num_threads = absl::GetFlag(FLAGS_num_threads);
  config.jobs = std::max(1, absl::GetFlag(FLAGS_jobs));
  config.work_dir = absl::GetFlag(FLAGS_work_dir);
  config.keep_work_dir = absl::GetFlag(FLAGS_keep_work_dir);
  config.progress = [](absl::string_view line) {
    std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data());
  };
  if (config.data.seeds < 1 || config.data.first_seed < 1 ||
      config.leaves < 2 || config.num_threads < 1) {
    std::fprintf(stderr, "plrank-bench-quality: --seeds >= 1, --first_seed >= 1, "
                         "--leaves >= 2 "
                         "and --num_threads >= 1 are required\n");
    return 2;
  }

  QualityRunInfo info;
  std::vector<std::string> words(argv, argv + argc);
  std::transform(words.begin(), words.end(), words.begin(), ShellQuote);
  info.command = absl::StrJoin(words, " ");
  info.date = absl::FormatTime("%Y-%m-%d %H:%M UTC", absl::Now(), absl::UTCTimeZone());
  info.git_commit = GitCommit(absl::GetFlag(FLAGS_source_dir),
                              absl::StrCat(fs::temp_directory_path().string(),
                                           "/plrank-quality-git.", getpid()));

  absl::StatusOr<QualityResults> results = RunQuality(config);
  if (!results.ok()) {
    std::fprintf(stderr, "plrank-bench-quality: %s\n",
                 std::string(results.status().message()).c_str());
    return 2;
  }
  const std::string report = FormatQualityReport(config, *results, info);
  std::fputs(report.c_str(), stdout);
  bool written = true;
  const std::string out = absl::GetFlag(FLAGS_out);
  std::string json_out = absl::GetFlag(FLAGS_json_out);
  if (json_out.empty() && !out.empty()) {
    json_out = absl::EndsWith(out, ".md") ? out.substr(0, out.size() - 3) + ".json"
                                          : out + ".json";
  }
  if (!out.empty()) written &= WriteText(out, report);
  if (!json_out.empty()) written &= WriteText(json_out, QualityJson(config, *results, info));
  bool failed = false;
  for (const QualitySetResult& set : results->sets) {
    failed = failed || !set.error.empty();
    for (const QualitySystemResult& row : set.systems) failed = failed || row.failed;
  }
  if (failed) std::fprintf(stderr, "plrank-bench-quality: some runs failed (see the report)\n");
  return written && !failed ? 0 : 1;
}

}  // namespace
}  // namespace plrank::bench

int main(int argc, char** argv) {
  std::vector<char*> rest = plrank::ParseProgramFlags(
      argc, argv,
      "Ranking quality of PLRank variants vs LambdaMART and XGBoost over real "
      "and generated data regimes.\n"
      "  plrank-bench-quality --out=bench/results/quality.md [--sets=...] "
      "[--plrank_variants='name=flags;...']");
  if (rest.size() > 1) {
    std::fprintf(stderr, "plrank-bench-quality: unexpected argument %s\n", rest[1]);
    return 2;
  }
  return plrank::bench::Main(argc, argv);
}
