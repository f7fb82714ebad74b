#include "core/scoring/row_keys.h"

#include <cmath>

#include "core/cpu/cpu_features.h"
#include "core/scoring/order_key.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace plrank::internal {

bool CpuHasAvx2ForRowKeys() { return CpuFeatures::Detected().avx2; }

void KeyGroupScalar(const float* rows, size_t row_stride, size_t docs,
                    const int32_t* features, size_t count, uint32_t low_missing,
                    uint32_t high_missing, uint32_t* low, uint32_t* high) {
  for (size_t d = 0; d < docs; ++d) {
    const float* row = rows + d * row_stride;
    for (size_t j = 0; j < count; ++j) {
      const float value = row[features[j]];
      const bool missing = std::isnan(value);
      const uint32_t key = OrderKey(value);
      low[j * kKeyGroupDocs + d] = missing ? low_missing : key;
      high[j * kKeyGroupDocs + d] = missing ? high_missing : key;
    }
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
namespace {

// v[k] <- the k-th floats of v[0..7] (an 8 x 8 transpose).
__attribute__((target("avx2"))) inline void Transpose8x8(__m256 v[8]) {
  const __m256 a0 = _mm256_unpacklo_ps(v[0], v[1]);
  const __m256 a1 = _mm256_unpackhi_ps(v[0], v[1]);
  const __m256 a2 = _mm256_unpacklo_ps(v[2], v[3]);
  const __m256 a3 = _mm256_unpackhi_ps(v[2], v[3]);
  const __m256 a4 = _mm256_unpacklo_ps(v[4], v[5]);
  const __m256 a5 = _mm256_unpackhi_ps(v[4], v[5]);
  const __m256 a6 = _mm256_unpacklo_ps(v[6], v[7]);
  const __m256 a7 = _mm256_unpackhi_ps(v[6], v[7]);
  const __m256 b0 = _mm256_shuffle_ps(a0, a2, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 b1 = _mm256_shuffle_ps(a0, a2, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 b2 = _mm256_shuffle_ps(a1, a3, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 b3 = _mm256_shuffle_ps(a1, a3, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 b4 = _mm256_shuffle_ps(a4, a6, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 b5 = _mm256_shuffle_ps(a4, a6, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 b6 = _mm256_shuffle_ps(a5, a7, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 b7 = _mm256_shuffle_ps(a5, a7, _MM_SHUFFLE(3, 2, 3, 2));
  v[0] = _mm256_permute2f128_ps(b0, b4, 0x20);
  v[1] = _mm256_permute2f128_ps(b1, b5, 0x20);
  v[2] = _mm256_permute2f128_ps(b2, b6, 0x20);
  v[3] = _mm256_permute2f128_ps(b3, b7, 0x20);
  v[4] = _mm256_permute2f128_ps(b0, b4, 0x31);
  v[5] = _mm256_permute2f128_ps(b1, b5, 0x31);
  v[6] = _mm256_permute2f128_ps(b2, b6, 0x31);
  v[7] = _mm256_permute2f128_ps(b3, b7, 0x31);
}

}  // namespace

__attribute__((target("avx2"))) void KeyGroupAvx2(
    const float* rows, size_t row_stride, const int32_t* features, size_t count,
    uint32_t low_missing, uint32_t high_missing, uint32_t* low,
    uint32_t* high) {
  static_assert(kKeyGroupDocs == 8);
  const __m256i sign = _mm256_set1_epi32(static_cast<int32_t>(0x80000000u));
  const __m256i low_fill = _mm256_set1_epi32(static_cast<int32_t>(low_missing));
  const __m256i high_fill =
      _mm256_set1_epi32(static_cast<int32_t>(high_missing));
  size_t j = 0;
  for (; j + 8 <= count; j += 8) {
    __m256 v[8];
    const int32_t first = features[j];
    if (features[j + 7] - first == 7) {
      // Increasing, so the 8 features are adjacent: plain loads.
      for (size_t d = 0; d < 8; ++d) {
        v[d] = _mm256_loadu_ps(rows + d * row_stride + first);
      }
    } else {
      const __m256i index =
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(features + j));
      for (size_t d = 0; d < 8; ++d) {
        v[d] = _mm256_i32gather_ps(rows + d * row_stride, index, 4);
      }
    }
    Transpose8x8(v);
    for (size_t k = 0; k < 8; ++k) {
      // OrderKey: -0 folded into +0, then the sign bit flipped for positive
      // values and all bits for negative ones.
      const __m256i bits =
          _mm256_castps_si256(_mm256_add_ps(v[k], _mm256_setzero_ps()));
      const __m256i key = _mm256_xor_si256(
          bits, _mm256_or_si256(_mm256_srai_epi32(bits, 31), sign));
      const __m256i missing =
          _mm256_castps_si256(_mm256_cmp_ps(v[k], v[k], _CMP_UNORD_Q));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(low + (j + k) * 8),
                          _mm256_blendv_epi8(key, low_fill, missing));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(high + (j + k) * 8),
                          _mm256_blendv_epi8(key, high_fill, missing));
    }
  }
  KeyGroupScalar(rows, row_stride, kKeyGroupDocs, features + j, count - j,
                 low_missing, high_missing, low + j * 8, high + j * 8);
}
#else
void KeyGroupAvx2(const float* rows, size_t row_stride, const int32_t* features,
                  size_t count, uint32_t low_missing, uint32_t high_missing,
                  uint32_t* low, uint32_t* high) {
  KeyGroupScalar(rows, row_stride, kKeyGroupDocs, features, count, low_missing,
                 high_missing, low, high);
}
#endif

}  // namespace plrank::internal
