#ifndef PLRANK_CORE_MODEL_ENSEMBLE_H_
#define PLRANK_CORE_MODEL_ENSEMBLE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/data/score_transform.h"

namespace plrank {

// Values v with -kZeroAsMissingBound <= v <= kZeroAsMissingBound count as
// missing at a node that treats zero as missing. LightGBM's kZeroThreshold:
// it is declared `const double kZeroThreshold = 1e-35f`, a float.
inline constexpr float kZeroAsMissingBound = 1e-35f;

// One regression tree in array form. Node 0 is the root (when the tree has at
// least one split). For internal node n: a document goes left when its value
// of split_feature[n] is <= threshold[n]; a missing value goes left iff
// default_left[n]. Missing means NaN, and also |value| <= kZeroAsMissingBound
// when zero_as_missing[n] is set (LightGBM's missing type "Zero").
// A child index >= 0 is an internal node; a negative child c is leaf ~c.
// A tree with no split has zero internal nodes and one leaf.
struct Tree {
  std::vector<int32_t> split_feature;
  std::vector<float> threshold;
  std::vector<uint8_t> default_left;
  // Empty (no node treats zero as missing) or one 0/1 per internal node.
  std::vector<uint8_t> zero_as_missing;
  std::vector<int32_t> left_child;
  std::vector<int32_t> right_child;
  std::vector<double> split_gain;      // for dumps and feature importance
  std::vector<double> leaf_value;      // already scaled by the learning rate
  std::vector<int32_t> leaf_count;     // training documents per leaf
  // Training cover per leaf when the source records one that is not a
  // document count (XGBoost: the leaf's sum of hessians, its "cover");
  // empty otherwise. TreeSHAP weighs by it when present, else by leaf_count.
  std::vector<double> leaf_cover;

  int32_t num_internal_nodes() const {
    return static_cast<int32_t>(split_feature.size());
  }
  int32_t num_leaves() const { return static_cast<int32_t>(leaf_value.size()); }
  bool treats_zero_as_missing(int32_t node) const {
    return !zero_as_missing.empty() && zero_as_missing[node] != 0;
  }
};

struct IterationMetrics {
  int32_t iteration = 0;              // 1-based
  double train_loss = 0.0;
  std::map<std::string, double> train;  // e.g. {"ndcg@10", 0.71}
  std::map<std::string, double> valid;
};

// A trained model as the core library sees it; model_io maps it to and from
// the protobuf artifact.
struct Ensemble {
  int32_t num_features = 0;
  std::vector<std::string> feature_names;   // optional
  std::string objective;                    // e.g. "plrank"
  int32_t num_outputs = 1;
  ScoreTransform transform = ScoreTransform::kIdentity;
  std::vector<double> base_score;           // one per output (may be empty = 0)
  // Tree t belongs to output t % num_outputs.
  std::vector<Tree> trees;
  // Optional linear part: score += sum_f linear_weights[f] * x_f (NaN -> 0).
  std::vector<double> linear_weights;

  // Training record.
  std::map<std::string, std::string> parameters;  // flag name -> value
  std::vector<IterationMetrics> history;
  int32_t best_iteration = 0;     // 0 = all trees
  std::string train_data_hash;    // hex digest of the training file(s)
  std::string valid_data_hash;
  int64_t created_unix_seconds = 0;
};

}  // namespace plrank

#endif  // PLRANK_CORE_MODEL_ENSEMBLE_H_
