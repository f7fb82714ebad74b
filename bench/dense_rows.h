#ifndef PLRANK_BENCH_DENSE_ROWS_H_
#define PLRANK_BENCH_DENSE_ROWS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/data/dataset.h"

namespace plrank::bench {

// Row-major float copy of the first `max_rows` documents of `data` and its
// first `width` feature columns, for XGBoost's dense C API: columns the data
// lacks are 0 (as an absent sparse entry is in a Dataset), NaN stays NaN
// (missing).
inline std::vector<float> DenseRows(const Dataset& data, size_t max_rows,
                                    int32_t width) {
  const size_t rows = std::min(max_rows, data.num_documents());
  std::vector<float> dense(rows * static_cast<size_t>(width), 0.0f);
  const int32_t present = std::min(width, data.num_features);
  constexpr size_t kBlock = 512;  // rows per block: keeps writes in cache
  for (size_t begin = 0; begin < rows; begin += kBlock) {
    const size_t end = std::min(rows, begin + kBlock);
    for (int32_t f = 0; f < present; ++f) {
      const float* column = data.column(f);
      for (size_t i = begin; i < end; ++i) {
        dense[i * static_cast<size_t>(width) + f] = column[i];
      }
    }
  }
  return dense;
}

}  // namespace plrank::bench

#endif  // PLRANK_BENCH_DENSE_ROWS_H_
