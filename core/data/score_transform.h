#ifndef PLRANK_CORE_DATA_SCORE_TRANSFORM_H_
#define PLRANK_CORE_DATA_SCORE_TRANSFORM_H_

namespace plrank {

// How a model's outputs turn into one ranking score. Declared by each
// objective (Objective::output_transform) and stored in the model
// (Ensemble::transform), so it lives below both layers. The values are the
// artifact's (plrank.v1.ScoreTransform).
enum class ScoreTransform {
  kIdentity = 0,           // num_outputs == 1: the score is the output
  kExpectedRelevance = 1,  // softmax over outputs k, score = sum_k k * P(k)
};

}  // namespace plrank

#endif  // PLRANK_CORE_DATA_SCORE_TRANSFORM_H_
