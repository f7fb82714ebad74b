#include "core/pipeline/auto_learning_rate.h"

#include <algorithm>

namespace plrank {

double AutoLearningRate(int64_t train_documents, int32_t num_trees) {
  if (train_documents < kAutoLearningRateDocuments || num_trees <= 0) {
    return kAutoLearningRateMin;
  }
  return std::clamp(kAutoShrinkageBudget / num_trees, kAutoLearningRateMin,
                    kAutoLearningRateMax);
}

}  // namespace plrank
