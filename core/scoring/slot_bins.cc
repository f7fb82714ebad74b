#include "core/scoring/slot_bins.h"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/scoring/order_key.h"

namespace plrank {
namespace {

// Padding of each slot's thresholds: no value key exceeds it (keys of real
// values are at most OrderKey(+inf)).
constexpr uint32_t kPadKey = std::numeric_limits<uint32_t>::max();

}  // namespace

std::optional<SlotBins> SlotBins::Build(
    const Ensemble& model,
    const std::vector<std::vector<uint32_t>>& split_slots) {
  uint32_t max_slot = 0;
  for (const std::vector<uint32_t>& tree_slots : split_slots) {
    for (uint32_t slot : tree_slots) max_slot = std::max(max_slot, slot);
  }
  std::vector<std::vector<uint32_t>> slot_keys(size_t{max_slot} + 1);
  for (size_t t = 0; t < model.trees.size(); ++t) {
    const Tree& tree = model.trees[t];
    for (int32_t n = 0; n < tree.num_internal_nodes(); ++n) {
      slot_keys[split_slots[t][n]].push_back(OrderKey(tree.threshold[n]));
    }
  }
  SlotBins bins;
  bins.compact_.assign(slot_keys.size(), -1);
  for (size_t s = 0; s < slot_keys.size(); ++s) {
    std::vector<uint32_t>& keys = slot_keys[s];
    if (keys.empty()) continue;
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    if (keys.size() > 255 || bins.slots_.size() == kMaxSlots) {
      return std::nullopt;
    }
    bins.compact_[s] = static_cast<int32_t>(bins.slots_.size());
    bins.slots_.push_back(static_cast<uint32_t>(s));
    // At least one padding key, so the block after the last one below any
    // value exists (see coarse_).
    const size_t begin = bins.thresholds_.size();
    bins.threshold_begin_.push_back(static_cast<uint32_t>(begin));
    bins.thresholds_.insert(bins.thresholds_.end(), keys.begin(), keys.end());
    bins.thresholds_.resize(begin + (keys.size() + 16) / 16 * 16, kPadKey);
    for (size_t k = 0; k < 16; ++k) {
      const size_t last = 16 * k + 15;
      bins.coarse_.push_back(last < keys.size() ? keys[last] : kPadKey);
    }
  }
  bins.threshold_begin_.push_back(
      static_cast<uint32_t>(bins.thresholds_.size()));
  return bins;
}

uint8_t SlotBins::ThresholdRank(uint32_t slot, uint32_t key) const {
  const int32_t c = compact_[slot];
  const uint32_t* begin = thresholds_.data() + threshold_begin_[c];
  const uint32_t* end = thresholds_.data() + threshold_begin_[c + 1];
  return static_cast<uint8_t>(std::lower_bound(begin, end, key) - begin);
}

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which
// -Wmaybe-uninitialized flags falsely.
#pragma GCC diagnostic push
#if !defined(__clang__)  // clang has no such warning
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
__attribute__((target("avx512f,avx512bw"))) void SlotBins::BinDocument(
    const uint32_t* doc_keys, size_t key_stride, uint8_t* bins,
    size_t bin_stride) const {
  const uint32_t* thresholds = thresholds_.data();
  const uint32_t* coarse = coarse_.data();
  for (size_t c = 0; c < slots_.size(); ++c, coarse += 16) {
    const __m512i key = _mm512_set1_epi32(
        static_cast<int32_t>(doc_keys[slots_[c] * key_stride]));
    const uint32_t block = static_cast<uint32_t>(std::popcount(
        _mm512_cmplt_epu32_mask(_mm512_loadu_si512(coarse), key)));
    const uint32_t* keys = thresholds + threshold_begin_[c] + 16 * block;
    bins[c * bin_stride] = static_cast<uint8_t>(
        16 * block +
        static_cast<uint32_t>(std::popcount(
            _mm512_cmplt_epu32_mask(_mm512_loadu_si512(keys), key))));
  }
}
#pragma GCC diagnostic pop
#else
void SlotBins::BinDocument(const uint32_t*, size_t, uint8_t*, size_t) const {}
#endif

}  // namespace plrank
