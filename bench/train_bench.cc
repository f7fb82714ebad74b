// plrank-bench-train: PLRank vs XGBoost on the same data, threads, trees,
// leaves, learning rate and bins. Every system runs as a child process, so
// peak RSS (wait4 ru_maxrss) and wall time are per system; training time is
// the `train_seconds=` line each trainer prints. Test scores are evaluated
// here with the project's metrics (NDCG@1/3/10, ERR; a query without a
// relevant document has NDCG 1), averaged over folds.
//
//   plrank-bench-train --folds_dir=/tmp/mq2008     # Fold*/{train,vali,test}.txt
//   plrank-bench-train --generated                  # ~480K docs x 136 features

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bench/child_process.h"
#include "bench/score_evaluation.h"
#include "bench/scratch_directory.h"
#include "bench/train_flag.h"
#include "common/program.h"
#include "core/data/file_io.h"
#include "core/data/letor_reader.h"

ABSL_FLAG(std::string, folds_dir, "",
          "directory of Fold*/train.txt,vali.txt,test.txt (e.g. from "
          "shared/data/make-folds.sh)");
ABSL_FLAG(bool, generated, false,
          "benchmark on data made by plrank-datagen instead of --folds_dir");
ABSL_FLAG(int32_t, max_folds, 0, "use only the first N folds (0 = all)");
ABSL_FLAG(std::string, bin_dir, "",
          "where plrank-train, plrank-eval, plrank-datagen and plrank-xgb-peer "
          "are (default: this program's directory)");
ABSL_FLAG(std::string, work_dir, "",
          "parent of the scratch directory, created when missing (default: "
          "$TMPDIR or /tmp)");
ABSL_FLAG(bool, keep_work_dir, false, "keep models, scores and logs");
ABSL_FLAG(std::string, systems, "plrank,plrank_k10,paper1,xgb_ndcg,xgb_pairwise",
          "systems to run: plrank (PLRank's defaults), plrank_k<K> (the "
          "defaults with --pl_topk=K, 0 = all), paper<m> or plrank<m> (the "
          "paper's PLRank(obj=m), --pl_paper), xgb_ndcg, xgb_pairwise");
PLRANK_BENCH_TRAIN_FLAG(trees, 0, "boosting rounds (0: 100 on folds, 300 generated)");
PLRANK_BENCH_TRAIN_FLAG(leaves, 31, "leaves per tree");
PLRANK_BENCH_TRAIN_FLAG(learning_rate, 0.1, "shrinkage");
PLRANK_BENCH_TRAIN_FLAG(num_threads, 2, "threads for every system");
PLRANK_BENCH_TRAIN_FLAG(max_bin, 255, "histogram bins per feature");
ABSL_FLAG(int32_t, repeats, 1,
          "train each system this many times per fold and keep the fastest "
          "run (damps noise from other load on a shared machine)");
PLRANK_BENCH_TRAIN_FLAG(seed, 1, "seed for every system and the generator");
ABSL_FLAG(int32_t, gen_queries, 4000, "generated set: number of queries");
ABSL_FLAG(int32_t, gen_mean_docs, 120, "generated set: mean documents/query");
ABSL_FLAG(int32_t, gen_features, 136, "generated set: features");
ABSL_FLAG(std::string, title, "", "heading of the report (default: the data)");
ABSL_FLAG(std::string, out, "", "also write the markdown report here");

namespace plrank::bench {
namespace {

namespace fs = std::filesystem;

struct Fold {
  std::string name, train, test;
};

struct System {
  std::string key;    // as in --systems
  std::string label;  // as in the table
  bool is_xgboost = false;
  std::vector<std::string> plrank_flags;  // PLRank: after --objective=plrank
  std::string xgb_objective;              // XGBoost
};

struct Totals {
  int folds = 0;
  bool failed = false;
  double train_seconds = 0, total_seconds = 0;
  int64_t peak_rss_kb = 0;  // the largest over folds
  std::vector<double> metrics = std::vector<double>(kNumBenchMetrics, 0.0);
};

absl::StatusOr<std::vector<System>> ParseSystems(const std::string& list) {
  std::vector<System> systems;
  for (absl::string_view key : absl::StrSplit(list, ',', absl::SkipEmpty())) {
    System s;
    s.key = std::string(key);
    int32_t m = 0;
    if (key == "xgb_ndcg" || key == "xgb_pairwise") {
      s.is_xgboost = true;
      s.xgb_objective = key == "xgb_ndcg" ? "rank:ndcg" : "rank:pairwise";
      s.label = absl::StrCat("XGBoost ", s.xgb_objective);
    } else if (key == "plrank") {
      s.label = "PLRank(default)";
    } else if (absl::ConsumePrefix(&key, "plrank_k") &&
               absl::SimpleAtoi(key, &m) && m >= 0) {
      s.plrank_flags = {absl::StrCat("--pl_topk=", m)};
      s.label = absl::StrCat("PLRank(default, K=", m == 0 ? "all" : key, ")");
    } else if ((absl::ConsumePrefix(&key, "paper") ||
                absl::ConsumePrefix(&key, "plrank")) &&
               absl::SimpleAtoi(key, &m) && m >= 1) {
      // plrank<m> keeps its old name: the paper's PLRank(obj=m).
      s.plrank_flags = {"--pl_paper", absl::StrCat("--pl_permutations=", m)};
      s.label = absl::StrCat("PLRank(paper, obj=", m, ")");
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown system ", s.key));
    }
    systems.push_back(std::move(s));
  }
  return systems;
}

std::string DefaultBinDir() {
  std::error_code error;
  fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? std::string(".") : self.parent_path().string();
}

absl::StatusOr<std::vector<Fold>> FoldsFromDir(const std::string& dir) {
  std::vector<Fold> folds;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || name.rfind("Fold", 0) != 0) continue;
    Fold fold{name, (entry.path() / "train.txt").string(),
              (entry.path() / "test.txt").string()};
    if (!fs::exists(fold.train) || !fs::exists(fold.test)) continue;
    folds.push_back(std::move(fold));
  }
  if (error) return absl::NotFoundError(absl::StrCat(dir, ": ", error.message()));
  if (folds.empty()) {
    return absl::NotFoundError(absl::StrCat("no Fold*/train.txt,test.txt in ", dir));
  }
  std::sort(folds.begin(), folds.end(),
            [](const Fold& a, const Fold& b) { return a.name < b.name; });
  return folds;
}

absl::StatusOr<std::vector<Fold>> GenerateFold(const std::string& bin_dir,
                                               const std::string& work) {
  const std::string prefix = work + "/generated";
  std::vector<std::string> argv = {
      bin_dir + "/plrank-datagen",
      absl::StrCat("--queries=", absl::GetFlag(FLAGS_gen_queries)),
      absl::StrCat("--mean_docs=", absl::GetFlag(FLAGS_gen_mean_docs)),
      absl::StrCat("--features=", absl::GetFlag(FLAGS_gen_features)),
      absl::StrCat("--seed=", absl::GetFlag(FLAGS_seed)),
      absl::StrCat("--out_prefix=", prefix)};
  std::fprintf(stderr, "generating data: %s\n", absl::StrJoin(argv, " ").c_str());
  absl::StatusOr<ChildRun> run =
      RunChild(argv, work + "/datagen.out", work + "/datagen.err");
  if (!run.ok()) return run.status();
  if (run->exit_code != 0) {
    return absl::InternalError(absl::StrCat("plrank-datagen failed:\n",
                                            TailOfFile(work + "/datagen.err", 10)));
  }
  return std::vector<Fold>{{"generated", prefix + ".train", prefix + ".test"}};
}

// Trains `system` on `fold` and leaves its test scores in `scores_path`.
absl::StatusOr<ChildRun> TrainAndScore(const System& system, const Fold& fold,
                                       const std::string& bin_dir,
                                       const std::string& base,
                                       const std::string& scores_path) {
  const std::string common[] = {
      absl::StrCat("--trees=", absl::GetFlag(FLAGS_trees)),
      absl::StrCat("--leaves=", absl::GetFlag(FLAGS_leaves)),
      absl::StrCat("--learning_rate=", absl::GetFlag(FLAGS_learning_rate)),
      absl::StrCat("--max_bin=", absl::GetFlag(FLAGS_max_bin)),
      absl::StrCat("--num_threads=", absl::GetFlag(FLAGS_num_threads)),
      absl::StrCat("--seed=", absl::GetFlag(FLAGS_seed)),
      "--quiet"};
  std::vector<std::string> argv;
  const std::string model = base + ".model";
  if (system.is_xgboost) {
    argv = {bin_dir + "/plrank-xgb-peer", "--train=" + fold.train,
            "--test=" + fold.test, "--scores_out=" + scores_path,
            "--objective=" + system.xgb_objective};
  } else {
    argv = {bin_dir + "/plrank-train", "--train=" + fold.train,
            "--objective=plrank", "--model_out=" + model};
    argv.insert(argv.end(), system.plrank_flags.begin(),
                system.plrank_flags.end());
  }
  argv.insert(argv.end(), std::begin(common), std::end(common));
  absl::StatusOr<ChildRun> run = RunChild(argv, base + ".out", base + ".err");
  if (!run.ok()) return run.status();
  if (run->exit_code != 0) {
    return absl::InternalError(
        absl::StrCat(absl::StrJoin(argv, " "), " failed (exit ", run->exit_code,
                     ", signal ", run->term_signal, "):\n",
                     TailOfFile(base + ".err", 10)));
  }
  if (!system.is_xgboost) {
    std::vector<std::string> eval = {bin_dir + "/plrank-eval", "--model=" + model,
                                     "--data=" + fold.test,
                                     "--scores_out=" + scores_path};
    absl::StatusOr<ChildRun> scored =
        RunChild(eval, base + ".eval.out", base + ".eval.err");
    if (!scored.ok()) return scored.status();
    if (scored->exit_code != 0) {
      return absl::InternalError(
          absl::StrCat(absl::StrJoin(eval, " "), " failed:\n",
                       TailOfFile(base + ".eval.err", 10)));
    }
  }
  return run;
}

std::string Verdict(bool pass) { return pass ? "PASS" : "MISS"; }

std::string Report(const std::string& title, double load, const std::vector<System>& systems,
                   const std::vector<Totals>& totals, int num_folds) {
  std::string md = absl::StrCat("### ", title, "\n\n");
  absl::StrAppendFormat(
      &md,
      "%d trees x %d leaves, learning rate %g, %d bins, %d threads, seed %d; "
      "%d fold(s); times are per-fold means (%s), peak RSS "
      "the largest over folds. "
      "Queries without a relevant document count NDCG = 1, ERR = 0. "
      "Load average at start %.2f on %u CPUs.\n\n",
      absl::GetFlag(FLAGS_trees), absl::GetFlag(FLAGS_leaves),
      absl::GetFlag(FLAGS_learning_rate), absl::GetFlag(FLAGS_max_bin),
      absl::GetFlag(FLAGS_num_threads), absl::GetFlag(FLAGS_seed), num_folds,
      absl::GetFlag(FLAGS_repeats) > 1
          ? absl::StrCat("of the fastest of ", absl::GetFlag(FLAGS_repeats), " runs")
          : std::string("one run"),
      load,
      std::thread::hardware_concurrency());
  md += "| system | train s | total s | peak RSS MB | NDCG@1 | NDCG@3 | NDCG@10 | ERR |\n";
  md += "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (size_t i = 0; i < systems.size(); ++i) {
    const Totals& t = totals[i];
    if (t.failed || t.folds == 0) {
      absl::StrAppend(&md, "| ", systems[i].label, " | failed | | | | | | |\n");
      continue;
    }
    absl::StrAppendFormat(&md, "| %s | %.2f | %.2f | %.0f | %.4f | %.4f | %.4f | %.4f |\n",
                          systems[i].label, t.train_seconds / t.folds,
                          t.total_seconds / t.folds, t.peak_rss_kb / 1024.0,
                          t.metrics[0] / t.folds, t.metrics[1] / t.folds,
                          t.metrics[2] / t.folds, t.metrics[3] / t.folds);
  }
  const Totals* ours = nullptr;
  const Totals* peer = nullptr;
  const Totals* top10 = nullptr;
  for (size_t i = 0; i < systems.size(); ++i) {
    const bool usable = !totals[i].failed && totals[i].folds > 0;
    if (systems[i].key == "plrank" && usable) ours = &totals[i];
    if (systems[i].key == "plrank_k10" && usable) top10 = &totals[i];
    if (systems[i].key == "xgb_ndcg" && usable) peer = &totals[i];
  }
  md += "\n";
  if (ours != nullptr && top10 != nullptr) {
    // The default takes the whole ranking: its cost over K = 10.
    const double k_ratio = ours->train_seconds / top10->train_seconds;
    absl::StrAppendFormat(
        &md, "PLRank(default) K=all / K=10 train time: %.3f (target <= 1.3): %s\n\n",
        k_ratio, Verdict(k_ratio <= 1.3));
  }
  if (ours == nullptr || peer == nullptr) {
    md += "Ratios: need both PLRank(default) and XGBoost rank:ndcg results.\n";
    return md;
  }
  auto mean = [](const Totals* t, double sum) { return sum / t->folds; };
  const double time_ratio =
      mean(ours, ours->train_seconds) / mean(peer, peer->train_seconds);
  const double total_ratio =
      mean(ours, ours->total_seconds) / mean(peer, peer->total_seconds);
  const double rss_ratio =
      static_cast<double>(ours->peak_rss_kb) / static_cast<double>(peer->peak_rss_kb);
  const double ndcg_diff = mean(ours, ours->metrics[kBenchNdcg10]) -
                           mean(peer, peer->metrics[kBenchNdcg10]);
  md += "PLRank(default) / XGBoost rank:ndcg:\n\n";
  absl::StrAppendFormat(&md, "- train time ratio %.3f (target <= 0.8): %s\n",
                        time_ratio, Verdict(time_ratio <= 0.8));
  absl::StrAppendFormat(&md, "- peak RSS ratio %.3f (target <= 1.0): %s\n",
                        rss_ratio, Verdict(rss_ratio <= 1.0));
  absl::StrAppendFormat(&md, "- NDCG@10 difference %+.4f (target >= 0): %s\n",
                        ndcg_diff, Verdict(ndcg_diff >= 0));
  absl::StrAppendFormat(&md, "- (total wall time ratio, load included: %.3f)\n",
                        total_ratio);
  return md;
}

int Main() {
  const bool generated = absl::GetFlag(FLAGS_generated);
  const std::string folds_dir = absl::GetFlag(FLAGS_folds_dir);
  if (generated == !folds_dir.empty()) {
    std::fprintf(stderr, "plrank-bench-train: give exactly one of --folds_dir, --generated\n");
    return 2;
  }
  if (absl::GetFlag(FLAGS_trees) <= 0) absl::SetFlag(&FLAGS_trees, generated ? 300 : 100);
  absl::StatusOr<std::vector<System>> systems = ParseSystems(absl::GetFlag(FLAGS_systems));
  if (!systems.ok()) {
    std::fprintf(stderr, "plrank-bench-train: %s\n", std::string(systems.status().message()).c_str());
    return 2;
  }
  const double load = WarnIfMachineBusy(0.5);
  std::string bin_dir = absl::GetFlag(FLAGS_bin_dir);
  if (bin_dir.empty()) bin_dir = DefaultBinDir();
  if (!fs::exists(bin_dir + "/plrank-xgb-peer")) {
    std::erase_if(*systems, [](const System& s) { return s.is_xgboost; });
    std::fprintf(stderr, "note: %s/plrank-xgb-peer not built (no XGBoost); "
                 "XGBoost systems skipped\n", bin_dir.c_str());
  }

  absl::StatusOr<std::unique_ptr<ScratchDirectory>> scratch =
      ScratchDirectory::Create(absl::GetFlag(FLAGS_work_dir), "plrank-bench",
                               absl::GetFlag(FLAGS_keep_work_dir));
  if (!scratch.ok()) {
    std::fprintf(stderr, "plrank-bench-train: %s\n",
                 std::string(scratch.status().message()).c_str());
    return 1;
  }
  const std::string& work = (*scratch)->path();

  absl::StatusOr<std::vector<Fold>> folds =
      generated ? GenerateFold(bin_dir, work) : FoldsFromDir(folds_dir);
  if (!folds.ok()) {
    std::fprintf(stderr, "plrank-bench-train: %s\n",
                 std::string(folds.status().message()).c_str());
    return 1;
  }
  int exit_code = 0;
  std::vector<Totals> totals(systems->size());
  if (const int32_t limit = absl::GetFlag(FLAGS_max_folds);
      limit > 0 && static_cast<int32_t>(folds->size()) > limit) {
    folds->resize(limit);
  }
  for (const Fold& fold : *folds) {
    absl::StatusOr<Dataset> test = ReadLetorFile(fold.test, ReadOptions{});
    if (!test.ok()) {
      std::fprintf(stderr, "%s\n", std::string(test.status().message()).c_str());
      return 1;
    }
    for (size_t i = 0; i < systems->size(); ++i) {
      const System& system = (*systems)[i];
      if (totals[i].failed) continue;
      const std::string base = absl::StrCat(work, "/", fold.name, ".", system.key);
      const std::string scores_path = base + ".scores";
      absl::StatusOr<ChildRun> run =
          TrainAndScore(system, fold, bin_dir, base, scores_path);
      double train_seconds = run.ok() ? ReportedValue(run->stdout_text, "train_seconds") : -1;
      for (int32_t r = 1; run.ok() && r < absl::GetFlag(FLAGS_repeats); ++r) {
        absl::StatusOr<ChildRun> again =
            TrainAndScore(system, fold, bin_dir, base, scores_path);
        if (!again.ok()) {
          run = again.status();
          break;
        }
        const double again_train = ReportedValue(again->stdout_text, "train_seconds");
        if (again_train < train_seconds) train_seconds = again_train;
        run->wall_seconds = std::min(run->wall_seconds, again->wall_seconds);
        run->peak_rss_kb = std::max(run->peak_rss_kb, again->peak_rss_kb);
      }
      absl::StatusOr<std::vector<double>> metrics =
          run.ok() ? ReadScoreFile(scores_path) : run.status();
      if (metrics.ok()) metrics = EvaluateScores(*test, *metrics);
      if (!metrics.ok()) {
        std::fprintf(stderr, "%s on %s: %s\n", system.label.c_str(), fold.name.c_str(),
                     std::string(metrics.status().message()).c_str());
        totals[i].failed = true;
        exit_code = 1;
        continue;
      }
      Totals& t = totals[i];
      ++t.folds;
      t.train_seconds += train_seconds >= 0 ? train_seconds : run->wall_seconds;
      t.total_seconds += run->wall_seconds;
      t.peak_rss_kb = std::max(t.peak_rss_kb, run->peak_rss_kb);
      for (int m = 0; m < kNumBenchMetrics; ++m) t.metrics[m] += (*metrics)[m];
      std::fprintf(stderr,
                   "%s %-24s train %.2fs total %.2fs rss %.0fMB ndcg@10 %.4f\n",
                   fold.name.c_str(), system.label.c_str(), train_seconds,
                   run->wall_seconds, run->peak_rss_kb / 1024.0,
                   (*metrics)[kBenchNdcg10]);
    }
  }

  std::string title = absl::GetFlag(FLAGS_title);
  if (title.empty()) {
    title = generated ? absl::StrCat("Generated set (plrank-datagen, ",
                                     absl::GetFlag(FLAGS_gen_queries), " queries x ~",
                                     absl::GetFlag(FLAGS_gen_mean_docs), " docs, ",
                                     absl::GetFlag(FLAGS_gen_features), " features)")
                      : absl::StrCat("Folds in ", folds_dir);
  }
  const std::string report =
      Report(title, load, *systems, totals, static_cast<int>(folds->size()));
  std::fputs(report.c_str(), stdout);
  if (const std::string out = absl::GetFlag(FLAGS_out); !out.empty()) {
    if (const absl::Status status = WriteFileAtomically(out, report);
        !status.ok()) {
      std::fprintf(stderr, "plrank-bench-train: %s\n",
                   std::string(status.message()).c_str());
      exit_code = 1;
    }
  }
  if (absl::GetFlag(FLAGS_keep_work_dir)) {
    std::fprintf(stderr, "scratch files kept in %s\n", work.c_str());
  }
  return exit_code;
}

}  // namespace
}  // namespace plrank::bench

int main(int argc, char** argv) {
  std::vector<char*> rest = plrank::ParseProgramFlags(
      argc, argv,
      "PLRank vs XGBoost: train time, peak RSS, test NDCG@1/3/10 and ERR.\n"
      "  plrank-bench-train --folds_dir=DIR | --generated [--trees N ...]");
  if (rest.size() > 1) {
    std::fprintf(stderr, "plrank-bench-train: unexpected argument %s\n", rest[1]);
    return 2;
  }
  return plrank::bench::Main();
}
