#ifndef PLRANK_CORE_PIPELINE_LINEAR_TRAINERS_H_
#define PLRANK_CORE_PIPELINE_LINEAR_TRAINERS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/data/dataset.h"
#include "core/linear/coordinate_ascent.h"
#include "core/linear/linear_listmle.h"
#include "core/linear/linear_model.h"

namespace plrank {

// What a linear ranker may read from a training job. Each trainer takes its
// own options; every one gets the job's first NDCG cut-off and seed.
struct LinearTrainerInputs {
  const Dataset* train = nullptr;
  const Dataset* valid = nullptr;  // optional
  int32_t ndcg_k = 10;             // the job's first --eval_at
  uint64_t seed = 1;
  CoordinateAscentOptions coordinate_ascent;
  LinearListMleOptions listmle;
  std::function<void(const std::string&)> log;
};

// A registered linear ranker: an --objective name that trains a weight
// vector (core/linear) instead of a tree ensemble.
struct LinearTrainer {
  const char* name;
  absl::StatusOr<LinearModelResult> (*train)(const LinearTrainerInputs&);
  // The command-line flags only this trainer reads (ignored, with a note,
  // by every other objective), and those it shares with tree objectives.
  std::vector<std::string> own_flags;
  std::vector<std::string> shared_flags;
};

// The registered linear rankers ("ca", "listmle"), in a stable order; the
// one list of them.
const std::vector<LinearTrainer>& LinearTrainers();

// The trainer called `name`, or null when it is not a linear ranker.
const LinearTrainer* FindLinearTrainer(const std::string& name);

// The linear rankers' names, in LinearTrainers() order.
std::vector<std::string> LinearObjectives();

// True for the objectives that train a linear model instead of trees.
bool IsLinearObjective(const std::string& name);

// Every --objective name, in a stable order: the tree objectives
// (TreeObjectives(), core/objectives/registry.h), then the linear rankers.
std::vector<std::string> KnownObjectives();

// OK for a name of KnownObjectives(); otherwise InvalidArgument listing
// them (and the PLRank name of a LightGBM objective such as "lambdarank").
absl::Status CheckObjectiveName(const std::string& name);

}  // namespace plrank

#endif  // PLRANK_CORE_PIPELINE_LINEAR_TRAINERS_H_
