#include "bench/quality_data.h"

#include <algorithm>
#include <filesystem>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bench/child_process.h"
#include "core/data/datagen_regimes.h"
#include "core/data/letor_reader.h"

namespace plrank::bench {
namespace {

namespace fs = std::filesystem;

absl::Status RunOrFail(const std::vector<std::string>& argv,
                       const std::string& base, std::string* out) {
  absl::StatusOr<ChildRun> run = RunChild(argv, base + ".out", base + ".err");
  if (!run.ok()) return run.status();
  if (run->exit_code != 0) {
    return absl::InternalError(absl::StrCat(absl::StrJoin(argv, " "),
                                            " failed:\n",
                                            TailOfFile(base + ".err", 10)));
  }
  if (out != nullptr) *out = run->stdout_text;
  return absl::OkStatus();
}

absl::Status CountTrain(QualitySplit& split) {
  absl::StatusOr<Dataset> train = ReadLetorFile(split.train, ReadOptions{});
  if (!train.ok()) return train.status();
  split.train_queries = train->num_queries();
  split.train_documents = train->num_documents();
  return absl::OkStatus();
}

// "wrote PATH: N queries, D documents, F features" for `path`.
void ParseWroteLine(const std::string& text, const std::string& path,
                    QualitySplit& split) {
  const std::string prefix = absl::StrCat("wrote ", path, ": ");
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, prefix)) continue;
    std::vector<absl::string_view> words =
        absl::StrSplit(line, absl::ByAnyChar(" ,"), absl::SkipEmpty());
    if (words.size() >= 4) {
      (void)absl::SimpleAtoi(words[0], &split.train_queries);
      (void)absl::SimpleAtoi(words[2], &split.train_documents);
    }
  }
}

// A real collection shipped as parts S1..S5 in shared/data/<set_dir>: its
// five standard folds (train S(k..k+2), validation S(k+3), test S(k+4)),
// made by make-folds.sh.
absl::StatusOr<QualitySetData> RealFolds(absl::string_view name,
                                         const std::string& set_dir,
                                         const std::string& title,
                                         const QualityDataConfig& config,
                                         const std::string& work_dir) {
  QualitySetData set;
  const std::string dir = absl::StrCat(work_dir, "/", name);
  if (absl::Status status = RunOrFail(
          {"/bin/bash", config.shared_data_dir + "/make-folds.sh", dir, set_dir},
          work_dir + "/make-folds", nullptr);
      !status.ok()) {
    return status;
  }
  const int folds = std::clamp(config.mq2008_folds, 1, 5);
  set.title = absl::StrCat(title, " (", folds, folds == 5 ? " standard" : "",
                           " fold", folds == 1 ? "" : "s",
                           ", train.txt -> test.txt)");
  for (int f = 1; f <= folds; ++f) {
    QualitySplit split;
    split.name = absl::StrCat("Fold", f);
    split.train = absl::StrCat(dir, "/Fold", f, "/train.txt");
    split.test = absl::StrCat(dir, "/Fold", f, "/test.txt");
    if (absl::Status status = CountTrain(split); !status.ok()) return status;
    set.splits.push_back(split);
  }
  return set;
}

absl::StatusOr<QualitySetData> LightGbm(const QualityDataConfig& config) {
  QualitySetData set;
  set.title = "LightGBM lambdarank example (rank.train -> rank.test, .query files)";
  const std::string dir = config.shared_data_dir + "/lightgbm-example";
  QualitySplit split;
  split.name = "rank.train/rank.test";
  split.train = dir + "/rank.train";  // the reader takes rank.train.query
  split.test = dir + "/rank.test";
  if (!fs::exists(split.train + ".query") || !fs::exists(split.test + ".query")) {
    return absl::NotFoundError(absl::StrCat("no rank.train/.test with .query in ", dir));
  }
  if (absl::Status status = CountTrain(split); !status.ok()) return status;
  set.splits.push_back(split);
  return set;
}

absl::StatusOr<QualitySetData> Generated(absl::string_view regime,
                                         const QualityDataConfig& config,
                                         const std::string& work_dir) {
  QualitySetData set;
  set.generated = true;
  // A small set's test queries are few: more seeds pool enough of them.
  const int seeds = IsSmallQualitySet(regime)
                        ? std::max(config.seeds, kSmallSetMinSeeds)
                        : config.seeds;
  const int last_seed = config.first_seed + seeds - 1;
  const int queries = config.gen_queries > 0 ? config.gen_queries
                                             : DefaultGeneratedQueries(regime);
  set.title = absl::StrCat(
      "generated, regime ", regime,
      config.gen_flags.empty()
          ? ""
          : absl::StrCat(", plrank-datagen ",
                         absl::StrJoin(config.gen_flags, " ")),
      " (", queries, " queries per seed, 60% train / 20% test, seeds ",
      config.first_seed, "..", last_seed, ")");
  for (int seed = config.first_seed; seed <= last_seed; ++seed) {
    const std::string prefix = absl::StrCat(work_dir, "/", regime, ".", seed);
    // The set's own flags come last, so they win over any in gen_flags.
    std::vector<std::string> datagen = {config.bin_dir + "/plrank-datagen",
                                        absl::StrCat("--regime=", regime)};
    datagen.insert(datagen.end(), config.gen_flags.begin(),
                   config.gen_flags.end());
    datagen.insert(datagen.end(),
                   {absl::StrCat("--queries=", queries),
                    absl::StrCat("--seed=", seed), "--out_prefix=" + prefix});
    std::string out;
    if (absl::Status status = RunOrFail(datagen, prefix + ".datagen", &out);
        !status.ok()) {
      return status;
    }
    QualitySplit split;
    split.name = absl::StrCat("seed ", seed);
    split.seed = seed;
    split.train = prefix + ".train";
    split.test = prefix + ".test";
    ParseWroteLine(out, split.train, split);
    for (absl::string_view line : absl::StrSplit(out, '\n')) {
      if (absl::StartsWith(line, "regime ")) {
        set.notes.push_back(absl::StrCat("seed ", seed, ", whole set: ",
                                         line.substr(line.find(": ") + 2)));
      }
    }
    set.splits.push_back(split);
  }
  return set;
}

}  // namespace

std::vector<std::string> KnownQualitySets() {
  std::vector<std::string> sets = {"mq2008", "lightgbm", "clueweb09",
                                   "table2018"};
  for (std::string& regime : DatagenRegimeNames()) {
    sets.push_back(std::move(regime));
  }
  return sets;
}

bool IsGeneratedQualitySet(absl::string_view name) {
  const std::vector<std::string> regimes = DatagenRegimeNames();
  return std::find(regimes.begin(), regimes.end(), name) != regimes.end();
}

bool IsSmallQualitySet(absl::string_view name) { return name == "small"; }

int DefaultGeneratedQueries(absl::string_view regime) {
  // ~25 documents per query: 2,500 documents, 60 training queries.
  if (regime == "small") return 100;
  // ~150 documents per query: fewer queries for about the same documents.
  if (regime == "many_relevant") return 800;
  // ~700 documents per query: TD2003/2004 have 50-75 queries.
  if (regime == "long_binary") return 300;
  // ~300 documents per query.
  if (regime == "deep_graded") return 600;
  // ~24 / 10 documents per query.
  if (regime == "short_graded") return 3000;
  if (regime == "short_binary") return 6000;
  return 1500;
}

absl::StatusOr<QualitySetData> PrepareQualitySet(
    absl::string_view name, const QualityDataConfig& config,
    const std::string& work_dir) {
  absl::StatusOr<QualitySetData> set =
      name == "mq2008"
          ? RealFolds(name, "MQ2008", "MQ2008", config, work_dir)
      : name == "clueweb09"
          ? RealFolds(name, "clueweb09", "ClueWeb09 features", config, work_dir)
      : name == "table2018"
          ? RealFolds(name, "table2018", "WWW'18 table retrieval", config,
                      work_dir)
      : name == "lightgbm" ? LightGbm(config)
      : IsGeneratedQualitySet(name)
          ? Generated(name, config, work_dir)
          : absl::StatusOr<QualitySetData>(absl::InvalidArgumentError(
                absl::StrCat("unknown data set '", name, "'; known: ",
                             absl::StrJoin(KnownQualitySets(), ","))));
  if (set.ok()) set->name = std::string(name);
  return set;
}

}  // namespace plrank::bench
