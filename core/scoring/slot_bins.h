#ifndef PLRANK_CORE_SCORING_SLOT_BINS_H_
#define PLRANK_CORE_SCORING_SLOT_BINS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/model/ensemble.h"

namespace plrank {

// Document values quantised against a forest's thresholds, one byte per
// tested slot, for byte-lane scorers (DenseScorerForest). For each doubled-row
// slot some node tests (see ForestScorer), the distinct thresholds of those
// nodes, sorted, t_0 < ... < t_{m-1}, give bin(v) = #{j : t_j < v}; a node with
// threshold t_j sends v right exactly when bin(v) > j, as v > t_j (missing
// values are already -inf or +inf keys in the doubled rows, so they bin to 0 or
// m and go where the walk sends them). Slots some node tests are numbered
// compactly.
class SlotBins {
 public:
  static constexpr size_t kMaxSlots = 256;

  // nullopt when the nodes test more than kMaxSlots slots, or a slot has
  // more than 255 distinct thresholds (bins must fit a byte).
  // split_slots[t][n] is the doubled-row slot internal node n of tree t
  // tests.
  static std::optional<SlotBins> Build(
      const Ensemble& model,
      const std::vector<std::vector<uint32_t>>& split_slots);

  size_t num_slots() const { return slots_.size(); }
  // Compact number of doubled-row slot `slot` (some node must test it).
  uint8_t CompactSlot(uint32_t slot) const {
    return static_cast<uint8_t>(compact_[slot]);
  }
  // Rank j of a node threshold (OrderKey `key`) among its slot's.
  uint8_t ThresholdRank(uint32_t slot, uint32_t key) const;

  // bins[c * bin_stride] = the document's bin in compact slot c, for the
  // document whose doubled-row slot s holds doc_keys[s * key_stride].
  // Requires AVX-512 F and BW (callers check).
  void BinDocument(const uint32_t* doc_keys, size_t key_stride, uint8_t* bins,
                   size_t bin_stride) const;

 private:
  SlotBins() = default;

  // Doubled-row slot of each compact slot, and the reverse (-1: untested).
  std::vector<uint32_t> slots_;
  std::vector<int32_t> compact_;
  // Distinct threshold keys of compact slot c, increasing, at
  // thresholds_[threshold_begin_[c]...], followed by at least one key no
  // value exceeds, to a multiple of 16; threshold_begin_ has one more entry
  // (the end).
  std::vector<uint32_t> thresholds_;
  std::vector<uint32_t> threshold_begin_;
  // coarse_[16 * c + k]: the last key of block k (16 keys) of compact slot
  // c's thresholds, or a padding key. A value exceeds all keys of the first
  // b blocks, b = its count of coarse keys below it, and none past block b:
  // two 16-key compares give its bin with no data-dependent loop.
  std::vector<uint32_t> coarse_;
};

}  // namespace plrank

#endif  // PLRANK_CORE_SCORING_SLOT_BINS_H_
