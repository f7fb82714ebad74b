#ifndef PLRANK_CORE_BOOSTING_BINNED_DATASET_H_
#define PLRANK_CORE_BOOSTING_BINNED_DATASET_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/boosting/bin_mapper.h"
#include "core/data/dataset.h"

namespace plrank {

// A dataset as uint8 bins, restricted to useful features (those a split can
// separate). Feature numbers here are "used" indices 0..num_features()-1;
// original() maps them back to Dataset columns.
//
// The training set is kept in both layouts, each where it wins (see
// HistogramBuilder): columns (feature-major) for partitioning a leaf on one
// feature and for histograms of the whole, contiguous root; rows
// (document-major) for histograms of scattered leaves. Validation sets are
// kept row-wise only: scoring a document walks features of that document.
class BinnedDataset {
 public:
  // Fits one BinMapper per feature on a deterministic, evenly strided sample
  // of at most max_sample documents, then bins every document.
  static BinnedDataset Build(const Dataset& data, int32_t max_bin,
                             size_t max_sample, int32_t num_threads);

  // Bins `data` with one fitted mapper per Dataset column (FitBinMappers,
  // core/boosting/bin_sample.h); features whose mapper is not useful are
  // dropped.
  static BinnedDataset FromMappers(const Dataset& data,
                                   std::vector<BinMapper> mappers,
                                   int32_t num_threads);

  // Bins `data` (e.g. the validation set) with `reference`'s mappers (rows).
  static BinnedDataset BuildWithMappers(const Dataset& data,
                                        const BinnedDataset& reference,
                                        int32_t num_threads);

  size_t num_documents() const { return num_documents_; }
  int32_t num_features() const { return static_cast<int32_t>(original_.size()); }
  int32_t original(int32_t feature) const { return original_[feature]; }
  const BinMapper& mapper(int32_t feature) const { return mappers_[feature]; }

  bool has_columns() const { return !columns_.empty(); }
  // Row-major bins, num_features() per document.
  const uint8_t* rows() const { return rows_.data(); }
  // Only with has_columns().
  const uint8_t* column(int32_t feature) const {
    return columns_.data() + static_cast<size_t>(feature) * num_documents_;
  }
  uint8_t bin(size_t document, int32_t feature) const {
    return has_columns() ? column(feature)[document]
                         : rows_[document * original_.size() + feature];
  }

 private:
  size_t num_documents_ = 0;
  std::vector<int32_t> original_;
  std::vector<BinMapper> mappers_;
  std::vector<uint8_t> columns_;  // training sets only
  std::vector<uint8_t> rows_;
};

}  // namespace plrank

#endif  // PLRANK_CORE_BOOSTING_BINNED_DATASET_H_
