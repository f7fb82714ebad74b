#ifndef PLRANK_CORE_PIPELINE_AUTO_LEARNING_RATE_H_
#define PLRANK_CORE_PIPELINE_AUTO_LEARNING_RATE_H_

#include <cstdint>

namespace plrank {

// PLRank's learning rate when the user gives none (plrank-train
// --objective=plrank without --learning_rate), from the size of the
// training data and the number of trees:
//   - below kAutoLearningRateDocuments training documents: 0.1, LightGBM's;
//   - from there on: kAutoShrinkageBudget / trees, kept within [0.1, 0.2],
//     i.e. 0.2 up to 100 trees, 0.1 from 200.
// Why (bench/results/quality-defaults.md): at 100 trees and 0.1, PLRank
// underfits sets of 50,000+ documents (MSLR-shaped: 0.6919 against 0.7098
// at 0.2, below XGBoost at its own defaults, 0.7004), while on smaller sets
// (MQ2008, 9,000 documents) 0.2 overfits (−0.009); at 300 trees 0.1 was the
// best of 0.1 / 0.15 / 0.2 on five of six sets. CatBoost likewise picks its
// default learning rate from the data size and the iteration count.
inline constexpr int64_t kAutoLearningRateDocuments = 50'000;
inline constexpr double kAutoShrinkageBudget = 20.0;
inline constexpr double kAutoLearningRateMin = 0.1;
inline constexpr double kAutoLearningRateMax = 0.2;

double AutoLearningRate(int64_t train_documents, int32_t num_trees);

}  // namespace plrank

#endif  // PLRANK_CORE_PIPELINE_AUTO_LEARNING_RATE_H_
