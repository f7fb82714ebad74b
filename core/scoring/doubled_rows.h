#ifndef PLRANK_CORE_SCORING_DOUBLED_ROWS_H_
#define PLRANK_CORE_SCORING_DOUBLED_ROWS_H_

// How documents' feature rows become what every scoring kernel reads
// (internal to core/scoring): "doubled rows" of order keys, in which a split
// finds its document's value already routed for missing values.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/model/ensemble.h"

namespace plrank::internal {

// With U = the features some split tests (used_features, increasing) and Z
// = those some split tests with zero as missing (zero_features, usually
// none): slot j < U holds OrderKey(x_f), f = used_features[j], with NaN ->
// -inf (default left goes left: -inf <= any finite threshold); slot U + j
// holds x_f with NaN -> +inf (default right). Splits that treat zero as
// missing read slots 2U + k (missing -> -inf) and 2U + Z + k (missing ->
// +inf), where f = zero_features[k] and missing also covers |x_f| <=
// kZeroAsMissingBound; so no kernel ever tests for missing. Thresholds are
// finite, so real infinities are routed as before. Rows are interleaved in
// groups of kLanes = 8 documents (flat_forest.h): slot s of document i is at
// doubled[(i / 8) * 8 * num_slots() + s * 8 + i % 8].
class DoubledRows {
 public:
  // The slots of `model` (validated): only features some split tests, so
  // they are sized by the widest split, not by the declared feature count
  // (untrusted input). ResourceExhausted when there are more slots than a
  // FlatNode's 16-bit slot field addresses.
  static absl::StatusOr<DoubledRows> Create(const Ensemble& model);

  size_t num_slots() const {
    return 2 * (used_features_.size() + zero_features_.size());
  }
  // One past the widest feature a split tests (0 without splits).
  int32_t split_width() const {
    return static_cast<int32_t>(slot_of_feature_.size());
  }
  // The slot each split reads: [t][n] for internal node n of tree t of the
  // model Create was given.
  std::vector<std::vector<uint32_t>> SplitSlots(const Ensemble& model) const;

  // Writes the doubled rows of `num_docs` rows (`row_stride` floats apart,
  // at least split_width() wide) to `doubled` (num_docs rounded up to a
  // group of 8, times num_slots(), entries).
  void Prepare(const float* rows, size_t num_docs, size_t row_stride,
               uint32_t* doubled) const;

 private:
  std::vector<int32_t> used_features_;
  std::vector<int32_t> zero_features_;
  // Per feature below split_width(): its index in used_features_ /
  // zero_features_, or -1.
  std::vector<int32_t> slot_of_feature_;
  std::vector<int32_t> zero_slot_of_feature_;
};

}  // namespace plrank::internal

#endif  // PLRANK_CORE_SCORING_DOUBLED_ROWS_H_
