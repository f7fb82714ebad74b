#ifndef PLRANK_CORE_SCORING_ROW_KEYS_H_
#define PLRANK_CORE_SCORING_ROW_KEYS_H_

// Order keys of a group of documents' features, written interleaved as
// doubled rows (doubled_rows.h; internal to core/scoring).

#include <cstddef>
#include <cstdint>

namespace plrank::internal {

// Documents whose keys KeyGroup writes together, and so the interleave of
// its output (ForestScorer's kLanes).
inline constexpr size_t kKeyGroupDocs = 8;

// Whether KeyGroupAvx2 may run (the CPU has AVX2).
bool CpuHasAvx2ForRowKeys();

// For the kKeyGroupDocs rows rows[d * row_stride ...] and j < count:
// low[j * kKeyGroupDocs + d] = OrderKey(rows[d * row_stride + features[j]])
// with NaN -> low_missing, and high[...] the same with NaN -> high_missing.
// features must increase strictly and index inside every row. Only where
// CpuHasAvx2ForRowKeys(); transposes 8 x 8 blocks instead of writing one
// key at a time with a stride (300 x 255 forest on 136 features: rows cost
// 0.075 us per document before).
void KeyGroupAvx2(const float* rows, size_t row_stride, const int32_t* features,
                  size_t count, uint32_t low_missing, uint32_t high_missing,
                  uint32_t* low, uint32_t* high);

// The same one key at a time, for any CPU, and for the first `docs` (at
// most kKeyGroupDocs) documents of a group: a group's remainder.
void KeyGroupScalar(const float* rows, size_t row_stride, size_t docs,
                    const int32_t* features, size_t count, uint32_t low_missing,
                    uint32_t high_missing, uint32_t* low, uint32_t* high);

}  // namespace plrank::internal

#endif  // PLRANK_CORE_SCORING_ROW_KEYS_H_
