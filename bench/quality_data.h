#ifndef PLRANK_BENCH_QUALITY_DATA_H_
#define PLRANK_BENCH_QUALITY_DATA_H_

// The data sets of plrank-bench-quality, each as train/test splits: the five
// standard folds of MQ2008, ClueWeb09 and table2018, the LightGBM lambdarank example (one split), and
// plrank-datagen regimes (one split per seed, its .train and .test parts).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace plrank::bench {

struct QualitySplit {
  std::string name;  // "Fold1", "seed 2", "rank.train/rank.test"
  std::string train, test;
  uint64_t seed = 1;  // every system's training seed on this split
  int64_t train_queries = 0, train_documents = 0;
};

struct QualitySetData {
  std::string name;   // as in --sets
  std::string title;  // as printed
  bool generated = false;
  std::vector<QualitySplit> splits;
  // One line per split worth printing (plrank-datagen's statistics line).
  std::vector<std::string> notes;
};

struct QualityDataConfig {
  std::string shared_data_dir;  // holds MQ2008/, lightgbm-example/, make-folds.sh
  std::string bin_dir;          // holds plrank-datagen
  int seeds = 3;                // generated sets: this many seeds,
  int first_seed = 1;           // first_seed .. first_seed + seeds - 1
  int mq2008_folds = 5;         // real 5-fold sets: the first N folds
  int gen_queries = 0;          // 0 = each regime's default
  // More plrank-datagen flags, after --regime (e.g. --noise=1.6).
  std::vector<std::string> gen_flags;
};

// mq2008, lightgbm, clueweb09, table2018 and every plrank-datagen regime.
std::vector<std::string> KnownQualitySets();

bool IsGeneratedQualitySet(absl::string_view name);

// Generated sets of small-data size ("small"): trained with the real sets'
// settings (100 trees, at least 5 documents per leaf) and over at least
// kSmallSetMinSeeds seeds.
bool IsSmallQualitySet(absl::string_view name);
inline constexpr int kSmallSetMinSeeds = 10;

// Queries generated per seed when --gen_queries is 0: sized so the default
// benchmark takes about 15-25 minutes on 2 cores.
int DefaultGeneratedQueries(absl::string_view regime);

// Makes (generated sets, MQ2008 folds) or locates (LightGBM example) the
// set's files under `work_dir`, which must exist.
absl::StatusOr<QualitySetData> PrepareQualitySet(
    absl::string_view name, const QualityDataConfig& config,
    const std::string& work_dir);

}  // namespace plrank::bench

#endif  // PLRANK_BENCH_QUALITY_DATA_H_
