#include "core/scoring/doubled_rows.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/scoring/flat_forest.h"
#include "core/scoring/order_key.h"
#include "core/scoring/row_keys.h"

namespace plrank::internal {

absl::StatusOr<DoubledRows> DoubledRows::Create(const Ensemble& model) {
  DoubledRows layout;
  int32_t widest_split = -1;
  for (const Tree& tree : model.trees) {
    for (int32_t feature : tree.split_feature) {
      widest_split = std::max(widest_split, feature);
    }
  }
  std::vector<int32_t>& slot_of_feature = layout.slot_of_feature_;
  std::vector<int32_t>& zero_slot_of_feature = layout.zero_slot_of_feature_;
  slot_of_feature.assign(widest_split + 1, -1);
  zero_slot_of_feature.assign(widest_split + 1, -1);
  for (const Tree& tree : model.trees) {
    for (int32_t n = 0; n < tree.num_internal_nodes(); ++n) {
      slot_of_feature[tree.split_feature[n]] = 0;
      if (tree.treats_zero_as_missing(n)) {
        zero_slot_of_feature[tree.split_feature[n]] = 0;
      }
    }
  }
  for (int32_t f = 0; f <= widest_split; ++f) {
    if (slot_of_feature[f] >= 0) {
      slot_of_feature[f] = static_cast<int32_t>(layout.used_features_.size());
      layout.used_features_.push_back(f);
    }
    if (zero_slot_of_feature[f] >= 0) {
      zero_slot_of_feature[f] =
          static_cast<int32_t>(layout.zero_features_.size());
      layout.zero_features_.push_back(f);
    }
  }
  // FlatNode::slot counts 8-byte units of an interleaved group.
  constexpr size_t kSlotUnits = kLanes * sizeof(uint32_t) / 8;
  if (layout.num_slots() * kSlotUnits > std::numeric_limits<uint16_t>::max()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "model splits on ", layout.used_features_.size(),
        " distinct features (", layout.zero_features_.size(),
        " of them with zero as missing, which count twice); the scorer "
        "supports at most ",
        std::numeric_limits<uint16_t>::max() / (2 * kSlotUnits)));
  }
  return layout;
}

std::vector<std::vector<uint32_t>> DoubledRows::SplitSlots(
    const Ensemble& model) const {
  const size_t used = used_features_.size();
  const size_t zero_used = zero_features_.size();
  std::vector<std::vector<uint32_t>> split_slots(model.trees.size());
  for (size_t t = 0; t < model.trees.size(); ++t) {
    const Tree& tree = model.trees[t];
    std::vector<uint32_t>& node_slots = split_slots[t];
    node_slots.resize(tree.num_internal_nodes());
    for (int32_t n = 0; n < tree.num_internal_nodes(); ++n) {
      const int32_t feature = tree.split_feature[n];
      if (tree.treats_zero_as_missing(n)) {
        const uint32_t zero_slot = static_cast<uint32_t>(
            2 * used + static_cast<size_t>(zero_slot_of_feature_[feature]));
        node_slots[n] = tree.default_left[n]
                            ? zero_slot
                            : zero_slot + static_cast<uint32_t>(zero_used);
        continue;
      }
      const uint32_t feature_slot =
          static_cast<uint32_t>(slot_of_feature_[feature]);
      node_slots[n] = tree.default_left[n]
                          ? feature_slot
                          : feature_slot + static_cast<uint32_t>(used);
    }
  }
  return split_slots;
}

void DoubledRows::Prepare(const float* rows, size_t num_docs, size_t row_stride,
                          uint32_t* doubled) const {
  const uint32_t low_missing =
      OrderKey(-std::numeric_limits<float>::infinity());
  const uint32_t high_missing =
      OrderKey(std::numeric_limits<float>::infinity());
  const size_t used = used_features_.size();
  const size_t zero_used = zero_features_.size();
  const size_t slots = num_slots();
  static_assert(kKeyGroupDocs == kLanes);
  static const bool avx2 = CpuHasAvx2ForRowKeys();
  // The used features' keys, a group of kLanes documents at a time (whole
  // groups with AVX2 where the CPU has it); features with zero as missing
  // one document at a time below.
  for (size_t first = 0; first < num_docs; first += kLanes) {
    const size_t docs = std::min(kLanes, num_docs - first);
    uint32_t* group = doubled + first * slots;
    const float* group_rows = rows + first * row_stride;
    if (avx2 && docs == kLanes) {
      KeyGroupAvx2(group_rows, row_stride, used_features_.data(), used,
                   low_missing, high_missing, group, group + used * kLanes);
    } else {
      KeyGroupScalar(group_rows, row_stride, docs, used_features_.data(), used,
                     low_missing, high_missing, group, group + used * kLanes);
    }
  }
  for (size_t i = 0; i < num_docs; ++i) {
    const float* row = rows + i * row_stride;
    uint32_t* group = doubled + (i / kLanes) * kLanes * slots + i % kLanes;
    uint32_t* zero_group = group + 2 * used * kLanes;
    for (size_t k = 0; k < zero_used; ++k) {
      const float value = row[zero_features_[k]];
      const bool missing =
          std::isnan(value) || std::fabs(value) <= kZeroAsMissingBound;
      const uint32_t key = OrderKey(value);
      zero_group[k * kLanes] = missing ? low_missing : key;
      zero_group[(zero_used + k) * kLanes] = missing ? high_missing : key;
    }
  }
}

}  // namespace plrank::internal
