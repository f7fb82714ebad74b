// QuickScorerForest's AVX-512 scan: 16 documents per instruction (see
// quick_scorer.h). Compiled for AVX-512 per function, called only when
// QuickScorerForest::Build found the CPU runs it.

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cstdint>

#include "core/scoring/quick_scorer.h"

namespace plrank {

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12's AVX-512 insert/extract/gather intrinsics start from
// _mm512_undefined_*(), which -Wmaybe-uninitialized flags falsely.
#pragma GCC diagnostic push
#if !defined(__clang__)  // clang has no such warning
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
__attribute__((target("avx512f,avx512cd"))) void
QuickScorerForest::AccumulateGroup16(const uint32_t* group_rows,
                                     size_t group_stride, int32_t num_trees,
                                     int32_t num_outputs, double* sum,
                                     double* out, size_t out_stride) const {
  constexpr size_t kDocs = 16;
  alignas(64) uint32_t masks[kMaxBlockTrees * kDocs];
  const __m512i all_ones = _mm512_set1_epi32(-1);
  const __m512i sign = _mm512_set1_epi32(static_cast<int32_t>(0x80000000u));
  // Single output: the 16 sums stay in two registers, one lane per document,
  // each added in tree order exactly as the scalar sum would be.
  __m512d sum_low = _mm512_setzero_pd();
  __m512d sum_high = _mm512_setzero_pd();
  if (num_outputs == 1) {
    sum_low = _mm512_loadu_pd(sum);
    sum_high = _mm512_loadu_pd(sum + 8);
  }
  for (const Block& block : blocks_) {
    if (block.tree_begin >= num_trees) break;
    const int32_t block_trees = block.tree_end - block.tree_begin;
    for (int32_t k = 0; k < block_trees; ++k) {
      _mm512_store_si512(masks + k * kDocs, all_ones);
    }
    const int32_t* thresholds = block.thresholds.data();
    const uint32_t* left_leaves = block.left_leaves.data();
    const uint32_t* tree_of_node = block.tree_of_node.data();
    for (size_t s = 0; s < block.slots.size(); ++s) {
      const uint32_t* slot_rows = group_rows + block.slots[s] * kLanes;
      const __m512i values = _mm512_xor_si512(
          _mm512_inserti64x4(
              _mm512_castsi256_si512(_mm256_loadu_si256(
                  reinterpret_cast<const __m256i*>(slot_rows))),
              _mm256_loadu_si256(
                  reinterpret_cast<const __m256i*>(slot_rows + group_stride)),
              1),
          sign);
      const uint32_t end = block.slot_begin[s + 1];
      for (uint32_t i = block.slot_begin[s]; i < end; ++i) {
        const __mmask16 right =
            _mm512_cmpgt_epi32_mask(values, _mm512_set1_epi32(thresholds[i]));
        if (right == 0) break;
        // tree_of_node counts in 8-lane units.
        uint32_t* mask = masks + 2 * tree_of_node[i];
        const __m512i current = _mm512_load_si512(mask);
        _mm512_store_si512(
            mask, _mm512_mask_andnot_epi32(
                      current, right,
                      _mm512_set1_epi32(static_cast<int32_t>(left_leaves[i])),
                      current));
      }
    }
    const int32_t end_tree = std::min(block.tree_end, num_trees);
    if (num_outputs == 1) {
      // Exit leaf = lowest set bit = 31 - lzcnt(m & -m); its value comes
      // from two-table permutes over the tree's 32 values (cheaper than a
      // gather from the same four cache lines).
      const __m512i thirty_one = _mm512_set1_epi32(31);
      const __m512i sixteen = _mm512_set1_epi64(16);
      for (int32_t t = block.tree_begin; t < end_tree; ++t) {
        const __m512i m =
            _mm512_load_si512(masks + (t - block.tree_begin) * kDocs);
        const __m512i lowest =
            _mm512_and_si512(m, _mm512_sub_epi32(_mm512_setzero_si512(), m));
        const __m512i leaf = _mm512_sub_epi32(
            thirty_one, _mm512_lzcnt_epi32(lowest));
        const double* values = leaf_values_.data() + t * kMaxLeaves;
        const __m512d v0 = _mm512_loadu_pd(values);
        const __m512d v1 = _mm512_loadu_pd(values + 8);
        const __m512d v2 = _mm512_loadu_pd(values + 16);
        const __m512d v3 = _mm512_loadu_pd(values + 24);
        const __m512i low = _mm512_cvtepu32_epi64(_mm512_castsi512_si256(leaf));
        const __m512i high =
            _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(leaf, 1));
        sum_low = _mm512_add_pd(
            sum_low, _mm512_mask_blend_pd(
                         _mm512_cmpge_epu64_mask(low, sixteen),
                         _mm512_permutex2var_pd(v0, low, v1),
                         _mm512_permutex2var_pd(v2, low, v3)));
        sum_high = _mm512_add_pd(
            sum_high, _mm512_mask_blend_pd(
                          _mm512_cmpge_epu64_mask(high, sixteen),
                          _mm512_permutex2var_pd(v0, high, v1),
                          _mm512_permutex2var_pd(v2, high, v3)));
      }
      continue;
    }
    for (int32_t t = block.tree_begin; t < end_tree; ++t) {
      const uint32_t* tree_masks = masks + (t - block.tree_begin) * kDocs;
      const double* values = leaf_values_.data() + t * kMaxLeaves;
      double* target = out + static_cast<size_t>(t % num_outputs) * out_stride;
      for (size_t d = 0; d < kDocs; ++d) {
        target[d] += values[std::countr_zero(tree_masks[d])];
      }
    }
  }
  if (num_outputs == 1) {
    _mm512_storeu_pd(sum, sum_low);
    _mm512_storeu_pd(sum + 8, sum_high);
  }
}
#pragma GCC diagnostic pop
#else
void QuickScorerForest::AccumulateGroup16(const uint32_t*, size_t, int32_t,
                                          int32_t, double*, double*,
                                          size_t) const {}
#endif

}  // namespace plrank
