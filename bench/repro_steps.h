#ifndef PLRANK_BENCH_REPRO_STEPS_H_
#define PLRANK_BENCH_REPRO_STEPS_H_

// The steps plrank-repro's runs share (bench/repro_lib.cc): finding the
// folds, training and scoring one system on one fold, per-query metrics.
// The tables (repro_lib.h) and the feature sweep (repro_sweep.h) use them.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/repro_lib.h"
#include "bench/repro_systems.h"
#include "bench/scratch_directory.h"
#include "core/data/dataset.h"

namespace plrank::bench {

struct Fold {
  std::string name, train, test;
  int number = 0;  // FoldN's N, for a numeric order (Fold10 after Fold9)
};

// The Fold<N>/{train,test}.txt of `dir`, in N order; an error when none.
absl::StatusOr<std::vector<Fold>> FoldsIn(const std::string& dir);

// Trains `system` on `fold` (plrank-train), scores the test part
// (plrank-eval --scores_out=scores_path) and returns the training seconds
// plrank-train reported (its wall time if it reported none). Scratch files
// start with `base`.
absl::StatusOr<double> TrainAndScore(const ReproConfig& config,
                                     const ReproSystem& system, int trees,
                                     const Fold& fold, const std::string& base,
                                     const std::string& scores_path);

}  // namespace plrank::bench

#endif  // PLRANK_BENCH_REPRO_STEPS_H_
