// DenseScorerForest's evaluation: 64 trees per AVX-512 instruction, one
// byte lane each (see dense_scorer.h). Compiled for AVX-512 per function,
// called only when DenseScorerForest::Build found the CPU runs it.

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "core/scoring/dense_scorer.h"

namespace plrank {

#if defined(__x86_64__) && defined(__GNUC__)
namespace {

// The bins of the 64 trees' slots `index` (one byte each) from a document's
// 256-byte table in four registers; with at most 128 compact slots, one
// two-table permute of the first two does it.
template <bool kWide>
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) inline __m512i
LookUpBins(const __m512i* table, __m512i index) {
  const __m512i low = _mm512_permutex2var_epi8(table[0], index, table[1]);
  if (!kWide) return low;
  const __m512i high = _mm512_permutex2var_epi8(table[2], index, table[3]);
  return _mm512_mask_blend_epi8(_mm512_movepi8_mask(index), low, high);
}

}  // namespace

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which
// -Wmaybe-uninitialized flags falsely.
#pragma GCC diagnostic push
#if !defined(__clang__)  // clang has no such warning
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

template <size_t kDocs, bool kWide>
__attribute__((target("avx512f,avx512bw,avx512vbmi,avx512cd"))) void
DenseScorerForest::Accumulate(const uint32_t* const* doc_keys,
                              size_t key_stride, int32_t num_trees,
                              double* sum) const {
  constexpr int kTables = kWide ? 4 : 2;
  __m512i table[kDocs][4];
  for (size_t d = 0; d < kDocs; ++d) {
    alignas(64) uint8_t bins[kMaxSlots] = {};
    bins_.BinDocument(doc_keys[d], key_stride, bins, 1);
    for (int q = 0; q < kTables; ++q) {
      table[d][q] = _mm512_load_si512(bins + 64 * q);
    }
  }
  const size_t trees = static_cast<size_t>(std::min(num_trees, num_trees_));
  const size_t ranks = static_cast<size_t>(ranks_);
  const __m512i thirty_one = _mm512_set1_epi32(31);
  alignas(64) uint32_t exit_leaf[kDocs][kGroupTrees];
  double total[kDocs];
  for (size_t d = 0; d < kDocs; ++d) total[d] = sum[d];
  for (size_t first = 0; first < trees; first += kGroupTrees) {
    // Leaves cleared so far, per tree: bit i = leaf i is not the exit.
    __m512i cleared[kDocs][4];
    for (size_t d = 0; d < kDocs; ++d) {
      for (int q = 0; q < 4; ++q) cleared[d][q] = _mm512_setzero_si512();
    }
    const RankVectors* rank =
        rank_vectors_.data() + first / kGroupTrees * ranks;
    for (size_t j = 0; j < ranks; ++j, ++rank) {
      const __m512i index = _mm512_load_si512(rank->slot);
      const __m512i threshold = _mm512_load_si512(rank->threshold);
      __m512i left[4];
      for (int q = 0; q < 4; ++q) {
        left[q] = _mm512_load_si512(rank->left_leaves + 16 * q);
      }
      for (size_t d = 0; d < kDocs; ++d) {
        const __mmask64 right = _mm512_cmpgt_epu8_mask(
            LookUpBins<kWide>(table[d], index), threshold);
        for (int q = 0; q < 4; ++q) {
          cleared[d][q] = _mm512_mask_or_epi32(
              cleared[d][q], static_cast<__mmask16>(right >> (16 * q)),
              cleared[d][q], left[q]);
        }
      }
    }
    // Exit leaf = lowest bit not cleared = 31 - lzcnt(m & -m), m = ~cleared.
    for (size_t d = 0; d < kDocs; ++d) {
      for (int q = 0; q < 4; ++q) {
        const __m512i m = _mm512_ternarylogic_epi32(
            cleared[d][q], cleared[d][q], cleared[d][q], 0x55);
        const __m512i lowest =
            _mm512_and_si512(m, _mm512_sub_epi32(_mm512_setzero_si512(), m));
        _mm512_store_si512(
            exit_leaf[d] + 16 * q,
            _mm512_sub_epi32(thirty_one, _mm512_lzcnt_epi32(lowest)));
      }
    }
    // Each document's additions in tree order; several documents' chains
    // of dependent additions overlap.
    const size_t count = std::min(kGroupTrees, trees - first);
    const double* values = leaf_values_.data() + first * kMaxLeaves;
    for (size_t k = 0; k < count; ++k) {
      for (size_t d = 0; d < kDocs; ++d) {
        total[d] += values[k * kMaxLeaves + exit_leaf[d][k]];
      }
    }
  }
  for (size_t d = 0; d < kDocs; ++d) sum[d] = total[d];
}

void DenseScorerForest::AccumulateDocuments(const uint32_t* const* doc_keys,
                                            size_t num_docs, size_t key_stride,
                                            int32_t num_trees,
                                            double* sum) const {
  const bool wide = bins_.num_slots() > 128;
  if (num_docs == 2) {
    if (wide) {
      Accumulate<2, true>(doc_keys, key_stride, num_trees, sum);
    } else {
      Accumulate<2, false>(doc_keys, key_stride, num_trees, sum);
    }
  } else if (wide) {
    Accumulate<1, true>(doc_keys, key_stride, num_trees, sum);
  } else {
    Accumulate<1, false>(doc_keys, key_stride, num_trees, sum);
  }
}

#pragma GCC diagnostic pop
#else
void DenseScorerForest::AccumulateDocuments(const uint32_t* const*, size_t,
                                            size_t, int32_t, double*) const {}
#endif

}  // namespace plrank
