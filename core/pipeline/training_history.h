#ifndef PLRANK_CORE_PIPELINE_TRAINING_HISTORY_H_
#define PLRANK_CORE_PIPELINE_TRAINING_HISTORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/ensemble.h"

namespace plrank {

// What plrank-train --history_out records beside the model's own history
// (Ensemble::history, which holds the train loss and every NDCG cut-off).
struct HistoryInfo {
  std::vector<int32_t> eval_at;   // the --eval_at cut-offs, in order
  int32_t trees = 0;              // configured iterations (0: linear ranker,
                                  // whose history has no loss)
  int32_t best_iteration = 0;     // iterations kept in the model
  int32_t early_stopping_rounds = 0;
  int64_t train_queries = 0;
  int64_t valid_queries = 0;      // 0 without --valid
  // The objective's loss on the validation set, one per entry of
  // model.history (NaN = not computed); empty = none at all.
  std::vector<double> valid_loss;
};

// Valid NDCG@(first cut-off) at `iteration` in model.history; NaN when it
// was not computed.
double ValidScoreAt(const Ensemble& model, int32_t first_cutoff,
                    int32_t iteration);

// The --history_out document (layout in README "Learning curves and
// pictures"): one record per entry of model.history with its iteration,
// train_loss, valid_loss and the train and valid NDCG of every cut-off, plus
// best_iteration and its valid score. Non-finite numbers are written null.
std::string TrainingHistoryJson(const Ensemble& model, const HistoryInfo& info);

}  // namespace plrank

#endif  // PLRANK_CORE_PIPELINE_TRAINING_HISTORY_H_
