// RapidScorerForest's scan: 64 documents per AVX-512 instruction, one byte
// lane each (see rapid_scorer.h). Compiled for AVX-512 per function, called
// only when RapidScorerForest::Build found the CPU runs it.

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/scoring/rapid_scorer.h"

namespace plrank {

#if defined(__x86_64__) && defined(__GNUC__)
namespace {

// One 64-document byte vector of leaf bitvectors.
struct alignas(64) MaskVector {
  uint8_t bytes[64];
};

// Per-thread bitvectors of one block of trees; sized once per thread.
MaskVector* BlockMasks(size_t vectors) {
  thread_local std::vector<MaskVector> masks;
  if (masks.size() < vectors) masks.resize(vectors);
  return masks.data();
}

// Per-thread documents going right at each threshold of one slot.
MaskVector* GoingRight(size_t vectors) {
  thread_local std::vector<MaskVector> going_right;
  if (going_right.size() < vectors) going_right.resize(vectors);
  return going_right.data();
}

// Adds values[leaf[d]] to the sum of document d (lane d % 8 of sums[d / 8])
// for the 64 byte lanes of `leaf`, values holding 16 * kChunks doubles. Each
// 8-lane sum takes a two-table permute per 16 values (and a blend per
// further 16): cheaper than a gather from the same few cache lines.
template <int kChunks>
__attribute__((target("avx512f,avx512bw"))) inline void AddLeafValues(
    const double* values, __m512i leaf, __m512d* sums) {
  __m512d table[2 * kChunks];
  for (int i = 0; i < 2 * kChunks; ++i) table[i] = _mm512_loadu_pd(values + 8 * i);
  for (int q = 0; q < 4; ++q) {
    __m128i bytes;
    switch (q) {
      case 0: bytes = _mm512_extracti32x4_epi32(leaf, 0); break;
      case 1: bytes = _mm512_extracti32x4_epi32(leaf, 1); break;
      case 2: bytes = _mm512_extracti32x4_epi32(leaf, 2); break;
      default: bytes = _mm512_extracti32x4_epi32(leaf, 3); break;
    }
    for (int half = 0; half < 2; ++half) {
      const __m512i index = _mm512_cvtepu8_epi64(
          half == 0 ? bytes : _mm_unpackhi_epi64(bytes, bytes));
      // Bits 0-3 of index pick among table[2c], table[2c + 1]; bits 4-5 c.
      __m512d value = _mm512_permutex2var_pd(table[0], index, table[1]);
      for (int c = 1; c < kChunks; ++c) {
        value = _mm512_mask_blend_pd(
            _mm512_cmpge_epu64_mask(index, _mm512_set1_epi64(16 * c)), value,
            _mm512_permutex2var_pd(table[2 * c], index, table[2 * c + 1]));
      }
      sums[2 * q + half] = _mm512_add_pd(sums[2 * q + half], value);
    }
  }
}

}  // namespace

// GCC 12's AVX-512 insert/extract/gather intrinsics start from
// _mm512_undefined_*(), which -Wmaybe-uninitialized flags falsely.
#pragma GCC diagnostic push
#if !defined(__clang__)  // clang has no such warning
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
__attribute__((target("avx512f,avx512bw,avx512bitalg"))) void
RapidScorerForest::AccumulateGroup64(const uint32_t* group_rows,
                                     size_t group_stride, int32_t num_trees,
                                     double* sum) const {
  const size_t tree_bytes = static_cast<size_t>(tree_bytes_);
  __m512i* masks = reinterpret_cast<__m512i*>(
      BlockMasks(static_cast<size_t>(trees_per_block_) * tree_bytes));
  __m512i* going_right =
      reinterpret_cast<__m512i*>(GoingRight(max_slot_thresholds_));
  const __m512i all_ones = _mm512_set1_epi32(-1);
  // The 64 sums stay in eight registers, one lane per document, each added
  // in tree order exactly as the scalar sum would be.
  __m512d sums[8];
  for (size_t g = 0; g < 8; ++g) sums[g] = _mm512_loadu_pd(sum + 8 * g);
  for (const Block& block : blocks_) {
    if (block.tree_begin >= num_trees) break;
    const size_t vectors =
        static_cast<size_t>(block.tree_end - block.tree_begin) * tree_bytes;
    for (size_t v = 0; v < vectors; ++v) _mm512_store_si512(masks + v, all_ones);
    const uint32_t* thresholds = block.thresholds.data();
    const uint32_t* threshold_begin = block.threshold_begin.data();
    const Entry* entries = block.entries.data();
    for (size_t s = 0; s < block.slots.size(); ++s) {
      // Slot s of the 64 documents: four vectors of 16 (two groups each).
      const uint32_t* rows = group_rows + size_t{block.slots[s]} * kLanes;
      __m512i values[4];
      for (size_t q = 0; q < 4; ++q) {
        values[q] = _mm512_inserti64x4(
            _mm512_castsi256_si512(_mm256_loadu_si256(
                reinterpret_cast<const __m256i*>(rows + 2 * q * group_stride))),
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(
                rows + (2 * q + 1) * group_stride)),
            1);
      }
      // Two passes, so neither loop's length depends on how many nodes
      // share a threshold: first which documents go right at each of the
      // slot's thresholds, up to the first no document exceeds; then every
      // entry of those thresholds.
      const uint32_t first = block.slot_begin[s];
      const uint32_t end = block.slot_begin[s + 1];
      uint32_t u = first;
      for (; u < end; ++u) {
        const __m512i threshold = _mm512_set1_epi32(
            static_cast<int32_t>(thresholds[u]));
        // Documents whose key exceeds the threshold go right.
        const __mmask64 right =
            static_cast<__mmask64>(_mm512_kunpackw(
                _mm512_cmpgt_epu32_mask(values[1], threshold),
                _mm512_cmpgt_epu32_mask(values[0], threshold))) |
            (static_cast<__mmask64>(_mm512_kunpackw(
                 _mm512_cmpgt_epu32_mask(values[3], threshold),
                 _mm512_cmpgt_epu32_mask(values[2], threshold)))
             << 32);
        if (right == 0) break;
        _mm512_store_si512(going_right + (u - first), _mm512_movm_epi8(right));
      }
      const uint32_t entries_end = threshold_begin[u];
      for (uint32_t e = threshold_begin[first]; e < entries_end; ++e) {
        __m512i* mask = masks + entries[e].offset;
        // mask & ~(going_right & bits)
        _mm512_store_si512(
            mask, _mm512_ternarylogic_epi32(
                      _mm512_load_si512(mask),
                      _mm512_load_si512(going_right + entries[e].threshold),
                      _mm512_set1_epi32(static_cast<int32_t>(entries[e].bits)),
                      0x70));
      }
    }
    // Exit leaf of each document: 8 * (first nonzero byte) + its lowest set
    // bit, found from the last byte to the first.
    const int32_t end_tree = std::min(block.tree_end, num_trees);
    const __m512i zero = _mm512_setzero_si512();
    const __m512i one = _mm512_set1_epi8(1);
    for (int32_t t = block.tree_begin; t < end_tree; ++t) {
      const __m512i* tree_masks =
          masks + static_cast<size_t>(t - block.tree_begin) * tree_bytes;
      __m512i leaf = zero;
      for (size_t b = tree_bytes; b-- > 0;) {
        const __m512i m = _mm512_load_si512(tree_masks + b);
        const __mmask64 nonzero = _mm512_test_epi8_mask(m, m);
        // trailing zeros = popcount((m & -m) - 1)
        const __m512i lowest = _mm512_and_si512(m, _mm512_sub_epi8(zero, m));
        const __m512i index = _mm512_add_epi8(
            _mm512_popcnt_epi8(_mm512_sub_epi8(lowest, one)),
            _mm512_set1_epi8(static_cast<char>(8 * b)));
        leaf = _mm512_mask_mov_epi8(leaf, nonzero, index);
      }
      const double* values = leaf_values_.data() + t * leaf_stride_;
      switch (leaf_stride_ / 16) {
        case 1: AddLeafValues<1>(values, leaf, sums); break;
        case 2: AddLeafValues<2>(values, leaf, sums); break;
        case 3: AddLeafValues<3>(values, leaf, sums); break;
        default: AddLeafValues<4>(values, leaf, sums); break;
      }
    }
  }
  for (size_t g = 0; g < 8; ++g) _mm512_storeu_pd(sum + 8 * g, sums[g]);
}
#pragma GCC diagnostic pop
#else
void RapidScorerForest::AccumulateGroup64(const uint32_t*, size_t, int32_t,
                                          double*) const {}
#endif

}  // namespace plrank
