#ifndef PLRANK_CORE_EXPLAIN_TREE_SHAP_H_
#define PLRANK_CORE_EXPLAIN_TREE_SHAP_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/model/ensemble.h"

namespace plrank {

// Exact path-dependent TreeSHAP of one regression tree (Lundberg, Erion &
// Lee 2018, "Consistent individualized feature attribution for tree
// ensembles", Algorithm 2 with EXTEND and UNWIND), O(leaves x depth^2) per
// document.
//
// The conditional expectation E[f(x) | x_S] is path-dependent: at a split on
// a feature in S the document's own direction is taken (missing values and
// zero-as-missing exactly as the scorer routes them); at any other split
// both children are averaged, weighted by their share of the node's
// training cover. A leaf's cover is Tree::leaf_cover when the model has it
// (XGBoost imports: the sum of hessians, as XGBoost's TreeSHAP weighs),
// else Tree::leaf_count training documents; an internal node's is the sum
// of its leaves'. A node whose cover is 0 (neither stored, or zeros) splits
// its weight equally: 1/2 to each child. The expected value of the tree,
// E[f(x)] with S empty, is the cover-weighted mean of its leaf values.
class ShapTree {
 public:
  // One element of the unique path (the paper's m): a feature with the
  // fraction of "zero" paths (feature not in S, weight by cover) and "one"
  // paths (feature in S, follows the document) through its splits, and the
  // permutation weight.
  struct PathElement {
    int32_t feature;
    double zero_fraction;
    double one_fraction;
    double weight;
  };

  // `tree` must be valid (ValidateEnsemble): children in range, acyclic.
  explicit ShapTree(const Tree& tree);

  // Splits on the longest root-to-leaf path (0 for a single leaf).
  int32_t depth() const { return depth_; }
  int32_t num_leaves() const {
    return static_cast<int32_t>(leaf_value_.size());
  }
  // Largest split feature + 1 (0 without splits): rows must be this wide.
  int32_t row_width() const { return row_width_; }
  // E[f(x)]: the leaf values weighted by their path probabilities.
  double expected_value() const { return expected_value_; }
  // PathElements AddContributions needs as scratch for this tree.
  size_t scratch_size() const {
    const size_t d = static_cast<size_t>(depth_) + 2;
    return d * (d + 1) / 2 + 1;
  }

  // The document's value of the tree's feature at internal node `node`
  // sends it left (as ForestScorer routes it).
  bool GoesLeft(int32_t node, float value) const;
  // Weight share of the left child of internal node `node` (see above).
  double left_fraction(int32_t node) const { return left_fraction_[node]; }
  int32_t split_feature(int32_t node) const { return split_feature_[node]; }
  // Child encoding as in Tree: >= 0 internal node, ~leaf otherwise.
  int32_t left_child(int32_t node) const { return left_child_[node]; }
  int32_t right_child(int32_t node) const { return right_child_[node]; }
  double leaf_value(int32_t leaf) const { return leaf_value_[leaf]; }
  bool has_splits() const { return !split_feature_.empty(); }

  // Adds the SHAP value of every feature for the document `row` (at least
  // row_width() floats, NaN = missing) to phi[feature] (phi at least
  // row_width() long). The values added sum to f(row) - expected_value().
  // `scratch` is resized to scratch_size() when shorter.
  void AddContributions(absl::Span<const float> row, absl::Span<double> phi,
                        std::vector<PathElement>* scratch) const;

 private:
  void Recurse(int32_t child, const float* row, double* phi, int unique_depth,
               PathElement* parent_path, double parent_zero_fraction,
               double parent_one_fraction, int32_t parent_feature) const;

  std::vector<int32_t> split_feature_;
  std::vector<float> threshold_;
  std::vector<uint8_t> default_left_;
  std::vector<uint8_t> zero_as_missing_;  // empty = none
  std::vector<int32_t> left_child_;
  std::vector<int32_t> right_child_;
  std::vector<double> left_fraction_;
  std::vector<double> leaf_value_;
  int32_t depth_ = 0;
  int32_t row_width_ = 0;
  double expected_value_ = 0.0;
};

}  // namespace plrank

#endif  // PLRANK_CORE_EXPLAIN_TREE_SHAP_H_
