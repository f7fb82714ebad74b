#include "bench/repro_lib.h"

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bench/child_process.h"
#include "bench/repro_steps.h"
#include "bench/score_evaluation.h"
#include "core/data/letor_reader.h"
#include "core/metrics/ranking_metrics.h"

namespace plrank::bench {
namespace {

namespace fs = std::filesystem;

// Runs a program to completion; a non-zero exit becomes an error carrying
// the command and the tail of its stderr.
absl::StatusOr<ChildRun> RunOrFail(const std::vector<std::string>& argv,
                                   const std::string& base) {
  const std::string err_path = base + ".err";
  absl::StatusOr<ChildRun> run = RunChild(argv, base + ".out", err_path);
  if (!run.ok()) return run.status();
  if (run->exit_code != 0) {
    return absl::InternalError(absl::StrCat(
        absl::StrJoin(argv, " "), " failed (exit ", run->exit_code, ", signal ",
        run->term_signal, "):\n", TailOfFile(err_path, 10)));
  }
  return run;
}

int TreesFor(const ReproSystem& system, const ReproConfig& config) {
  if (system.linear) return 0;
  if (!system.scaled_trees) return config.trees;
  return std::max(1, static_cast<int>(std::lround(config.trees *
                                                  config.mcrank_trees_factor)));
}

std::vector<std::string> TrainArgs(const ReproConfig& config,
                                   const std::string& train_path,
                                   const std::string& objective,
                                   int permutations, int trees,
                                   const std::string& model) {
  std::vector<std::string> argv = {
      config.bin_dir + "/plrank-train", "--train=" + train_path,
      "--objective=" + objective,
      // Linear systems ignore the tree settings; plrank-train still wants
      // --trees > 0.
      absl::StrCat("--trees=", std::max(trees, 1)),
      absl::StrCat("--leaves=", config.leaves),
      absl::StrCat("--learning_rate=", config.learning_rate),
      absl::StrCat("--num_threads=", config.num_threads),
      absl::StrCat("--seed=", config.seed), "--model_out=" + model};
  // PLRank(obj=m) rows are the paper's PLRank; permutations == 0 is
  // PLRank with the trainer's defaults.
  if (objective == "plrank" && permutations > 0) {
    for (std::string& arg : PaperPlrankArgs(permutations)) {
      argv.push_back(std::move(arg));
    }
  }
  return argv;
}

}  // namespace

absl::StatusOr<std::vector<Fold>> FoldsIn(const std::string& dir) {
  std::vector<Fold> folds;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    absl::string_view suffix = name;
    int number = 0;
    if (!entry.is_directory() || !absl::ConsumePrefix(&suffix, "Fold") ||
        !absl::SimpleAtoi(suffix, &number)) {
      continue;
    }
    Fold fold{name, (entry.path() / "train.txt").string(),
              (entry.path() / "test.txt").string(), number};
    if (fs::exists(fold.train) && fs::exists(fold.test)) folds.push_back(fold);
  }
  if (error)
    return absl::NotFoundError(absl::StrCat(dir, ": ", error.message()));
  if (folds.empty()) {
    return absl::NotFoundError(
        absl::StrCat("no Fold<N>/train.txt,test.txt in ", dir,
                     " (make them with shared/data/make-folds.sh DIR)"));
  }
  std::sort(folds.begin(), folds.end(),
            [](const Fold& a, const Fold& b) { return a.number < b.number; });
  return folds;
}

absl::StatusOr<double> TrainAndScore(const ReproConfig& config,
                                     const ReproSystem& system, int trees,
                                     const Fold& fold, const std::string& base,
                                     const std::string& scores_path) {
  const std::string model = base + ".model";
  std::vector<std::string> train = TrainArgs(
      config, fold.train, system.objective, system.permutations, trees, model);
  train.push_back("--quiet");
  absl::StatusOr<ChildRun> trained = RunOrFail(train, base + ".train");
  if (!trained.ok()) return trained.status();
  const std::vector<std::string> eval = {
      config.bin_dir + "/plrank-eval", "--model=" + model,
      "--data=" + fold.test, "--scores_out=" + scores_path};
  absl::StatusOr<ChildRun> scored = RunOrFail(eval, base + ".eval");
  if (!scored.ok()) return scored.status();
  const double seconds = ReportedValue(trained->stdout_text, "train_seconds");
  return seconds >= 0 ? seconds : trained->wall_seconds;
}

namespace {

int64_t CountEmptyQueries(const Dataset& data) {
  // ERR is 0 exactly when no document is relevant, whatever the ranking.
  std::vector<double> zeros(data.num_documents(), 0.0);
  const std::vector<double> err =
      PerQueryMetric(data, zeros, MetricSpec{MetricSpec::Kind::kErr, 0}, {});
  return std::count(err.begin(), err.end(), 0.0);
}

void MarkSignificance(ReproResults& results) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<ReproSystemResult>& rows = results.systems;
  int reference = -1;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].system.key == results.config.reference) reference = i;
  }
  for (size_t i = 0; i < rows.size() && reference < 0; ++i) {
    if (rows[i].system.objective == "plrank") reference = i;
  }
  if (reference < 0 && !rows.empty()) reference = 0;
  if (reference >= 0 && rows[reference].failed) reference = -1;
  results.reference = reference;
  for (ReproSystemResult& row : rows) {
    row.p_values.assign(kNumBenchMetrics, nan);
    row.marks.assign(kNumBenchMetrics, 0);
    if (row.failed || reference < 0 || &row == &rows[reference]) continue;
    for (int m = 0; m < kNumBenchMetrics; ++m) {
      const std::vector<double>& ours = row.per_query[m];
      const std::vector<double>& theirs = rows[reference].per_query[m];
      const double p = PairedTTestPValue(ours, theirs);
      row.p_values[m] = p;
      if (p < results.config.significance_level) {
        row.marks[m] = MeanIgnoringNan(ours) > MeanIgnoringNan(theirs) ? 1 : -1;
      }
    }
  }
}

}  // namespace

bool ReproResults::ok() const {
  for (const ReproSystemResult& row : systems) {
    if (row.failed) return false;
  }
  for (const CompressionRow& row : compression) {
    if (!row.error.empty()) return false;
  }
  return true;
}

absl::StatusOr<CompressionRow> ParseContextsLine(std::string_view text) {
  for (absl::string_view line :
       absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    const size_t at = line.find("contexts: ");
    if (at == absl::string_view::npos) continue;
    // "contexts: N distinct of T (ratio ..."
    std::vector<absl::string_view> words = absl::StrSplit(
        line.substr(at + 10), absl::ByAnyChar(" (,)"), absl::SkipEmpty());
    CompressionRow row;
    if (words.size() >= 4 && words[1] == "distinct" && words[2] == "of" &&
        absl::SimpleAtoi(words[0], &row.distinct) &&
        absl::SimpleAtoi(words[3], &row.total)) {
      row.ratio = row.total > 0 ? static_cast<double>(row.distinct) /
                                      static_cast<double>(row.total)
                                : 1.0;
      return row;
    }
  }
  return absl::NotFoundError("no 'contexts: N distinct of T' line");
}

absl::StatusOr<std::vector<int>> ParsePositiveIntList(std::string_view text) {
  std::vector<int> values;
  for (absl::string_view piece :
       absl::StrSplit(absl::string_view(text.data(), text.size()), ',',
                      absl::SkipEmpty())) {
    int value = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(piece), &value) ||
        value < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", piece, "' is not a positive integer"));
    }
    values.push_back(value);
  }
  return values;
}

absl::StatusOr<ReproResults> RunRepro(const ReproConfig& config) {
  auto progress = [&config](const std::string& line) {
    if (config.progress) config.progress(line);
  };
  ReproResults results;
  results.config = config;
  results.config.progress = nullptr;
  absl::StatusOr<std::vector<Fold>> folds = FoldsIn(config.folds_dir);
  if (!folds.ok()) return folds.status();
  if (config.max_folds > 0 &&
      static_cast<int>(folds->size()) > config.max_folds) {
    folds->resize(config.max_folds);
  }
  for (const Fold& fold : *folds) results.fold_names.push_back(fold.name);
  results.load_average = WarnIfMachineBusy(1.0);

  absl::StatusOr<std::unique_ptr<ScratchDirectory>> scratch =
      ScratchDirectory::Create(config.work_dir, "plrank-repro",
                               config.keep_work_dir);
  if (!scratch.ok()) return scratch.status();
  const std::string& work = (*scratch)->path();
  if (config.keep_work_dir) progress(absl::StrCat("scratch files in ", work));

  for (const ReproSystem& system : config.systems) {
    ReproSystemResult row;
    row.system = system;
    row.trees = TreesFor(system, config);
    row.per_query.resize(kNumBenchMetrics);
    results.systems.push_back(std::move(row));
  }

  const int num_folds = folds->size();
  for (int f = 0; f < num_folds; ++f) {
    const Fold& fold = (*folds)[f];
    absl::StatusOr<Dataset> test = ReadLetorFile(fold.test, ReadOptions{});
    if (!test.ok()) return test.status();
    results.num_test_queries += test->num_queries();
    results.num_empty_test_queries += CountEmptyQueries(*test);
    for (ReproSystemResult& row : results.systems) {
      if (row.failed) continue;
      const std::string base =
          absl::StrCat(work, "/", fold.name, ".", row.system.key);
      const std::string scores_path = base + ".scores";
      absl::StatusOr<double> seconds =
          TrainAndScore(config, row.system, row.trees, fold, base, scores_path);
      absl::StatusOr<std::vector<double>> scores =
          seconds.ok() ? ReadScoreFile(scores_path)
                       : absl::StatusOr<std::vector<double>>(seconds.status());
      absl::StatusOr<std::vector<std::vector<double>>> values =
          scores.ok() ? EvaluateScoresPerQuery(*test, *scores)
                      : absl::StatusOr<std::vector<std::vector<double>>>(
                            scores.status());
      if (!values.ok()) {
        row.failed = true;
        row.error = absl::StrCat(fold.name, ": ", values.status().message());
        progress(absl::StrFormat("[fold %d/%d] %s: FAILED: %s", f + 1,
                                 num_folds, row.system.key,
                                 values.status().message()));
        continue;
      }
      std::vector<double> means;
      for (int m = 0; m < kNumBenchMetrics; ++m) {
        means.push_back(MeanIgnoringNan((*values)[m]));
        row.per_query[m].insert(row.per_query[m].end(), (*values)[m].begin(),
                                (*values)[m].end());
      }
      row.fold_means.push_back(means);
      row.fold_train_seconds.push_back(*seconds);
      row.train_seconds += *seconds;
      progress(absl::StrFormat(
          "[fold %d/%d] %s: train %.1fs, test NDCG@10 %.3f", f + 1, num_folds,
          row.system.key, *seconds, means[kBenchNdcg10]));
    }
  }
  for (ReproSystemResult& row : results.systems) {
    row.means.assign(kNumBenchMetrics,
                     std::numeric_limits<double>::quiet_NaN());
    if (row.failed || row.fold_means.empty()) continue;
    for (int m = 0; m < kNumBenchMetrics; ++m) {
      double sum = 0;
      for (const std::vector<double>& fold_means : row.fold_means)
        sum += fold_means[m];
      row.means[m] = sum / row.fold_means.size();
    }
  }
  MarkSignificance(results);
  for (const char* key : {"mart2", "mart1"}) {
    for (size_t i = 0; i < results.systems.size() && results.time_baseline < 0;
         ++i) {
      if (results.systems[i].system.key == key && !results.systems[i].failed) {
        results.time_baseline = i;
      }
    }
  }

  // Table 3: context statistics are a property of the data and m, so one
  // tree on the first fold's training part is enough.
  for (int m : config.obj_list) {
    for (bool stop_at_lowest_label : {true, false}) {
      const std::string base = absl::StrCat(
          work, "/contexts.obj", m, stop_at_lowest_label ? "" : ".plain");
      std::vector<std::string> argv = TrainArgs(
          config, folds->front().train, "plrank", 0, 1, base + ".model");
      // The paper's sampled tie-breaks, whose shared contexts Table 3 counts.
      argv.push_back(absl::StrCat("--pl_permutations=", m));
      argv.push_back("--pl_ties=permutation");
      argv.push_back("--pl_topk=10");
      argv.push_back(stop_at_lowest_label ? "--pl_stop_at_lowest_label"
                                          : "--nopl_stop_at_lowest_label");
      absl::StatusOr<ChildRun> run = RunOrFail(argv, base);
      absl::StatusOr<CompressionRow> row =
          run.ok() ? ParseContextsLine(run->stdout_text)
                   : absl::StatusOr<CompressionRow>(run.status());
      CompressionRow out = row.ok() ? *row : CompressionRow{};
      if (!row.ok()) out.error = std::string(row.status().message());
      out.permutations = m;
      out.stop_at_lowest_label = stop_at_lowest_label;
      out.equivalent_objectives = out.ratio * m;
      results.compression.push_back(out);
      progress(
          row.ok()
              ? absl::StrFormat(
                    "[contexts] obj=%d %s: ratio %.3f, equivalent %.2f", m,
                    stop_at_lowest_label ? "default" : "plain top-K", out.ratio,
                    out.equivalent_objectives)
              : absl::StrFormat("[contexts] obj=%d: FAILED: %s", m, out.error));
    }
  }
  return results;
}

}  // namespace plrank::bench
