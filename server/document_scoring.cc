#include "server/document_scoring.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace plrank::server {
namespace {

// Per-thread buffers kept across requests of a server thread. A request
// larger than this keeps its buffers only until the next request starts.
constexpr size_t kRetainedRowFloats = size_t{4} << 20;  // 16 MiB

struct ThreadBuffers {
  std::vector<float> rows;
  std::vector<double> scores;
};

ThreadBuffers& Buffers() {
  thread_local ThreadBuffers buffers;
  return buffers;
}

std::string DocumentName(const v1::Document& document, size_t index,
                         absl::string_view context) {
  return absl::StrCat(context, "document ", index,
                      document.id().empty() ? ""
                                            : absl::StrCat(" (id '",
                                                           document.id(), "')"));
}

}  // namespace

absl::Status DocumentToRow(const v1::Document& document, size_t index,
                           absl::string_view context, absl::Span<float> row) {
  const size_t num_features = row.size();
  switch (document.features_case()) {
    case v1::Document::kDense: {
      const auto& values = document.dense().values();
      if (static_cast<size_t>(values.size()) != num_features) {
        return absl::InvalidArgumentError(absl::StrCat(
            DocumentName(document, index, context), ": ", values.size(),
            " dense features, the model expects ", num_features));
      }
      for (int f = 0; f < values.size(); ++f) {
        if (std::isinf(values[f])) {
          return absl::InvalidArgumentError(absl::StrCat(
              DocumentName(document, index, context), ": feature ", f,
              " is infinite (use NaN for a missing value)"));
        }
      }
      std::memcpy(row.data(), values.data(), num_features * sizeof(float));
      return absl::OkStatus();
    }
    case v1::Document::kSparse: {
      const auto& indices = document.sparse().indices();
      const auto& values = document.sparse().values();
      if (indices.size() != values.size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            DocumentName(document, index, context), ": ", indices.size(),
            " sparse indices but ", values.size(), " values"));
      }
      std::fill(row.begin(), row.end(), 0.0f);
      int64_t previous = -1;
      for (int i = 0; i < indices.size(); ++i) {
        const uint32_t feature = indices[i];
        if (static_cast<int64_t>(feature) <= previous) {
          return absl::InvalidArgumentError(absl::StrCat(
              DocumentName(document, index, context),
              ": sparse indices must be strictly increasing (index ", feature,
              " after ", previous, ")"));
        }
        if (feature >= num_features) {
          return absl::InvalidArgumentError(absl::StrCat(
              DocumentName(document, index, context), ": sparse index ",
              feature, " out of range; the model has ", num_features,
              " features (0-based)"));
        }
        if (std::isinf(values[i])) {
          return absl::InvalidArgumentError(absl::StrCat(
              DocumentName(document, index, context), ": feature ", feature,
              " is infinite (use NaN for a missing value)"));
        }
        row[feature] = values[i];
        previous = feature;
      }
      return absl::OkStatus();
    }
    case v1::Document::FEATURES_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(DocumentName(document, index, context),
                   ": no features (set dense or sparse)"));
}

absl::StatusOr<absl::Span<const double>> DocumentScorer::Score(
    const ForestScorer& scorer, const Documents& documents,
    absl::string_view context, InterruptCheck interrupted) {
  ThreadBuffers& buffers = Buffers();
  if (buffers.rows.size() > kRetainedRowFloats) {
    std::vector<float>().swap(buffers.rows);
    std::vector<double>().swap(buffers.scores);
  }
  const size_t num_docs = static_cast<size_t>(documents.size());
  const size_t width = static_cast<size_t>(scorer.num_features());
  if (buffers.rows.size() < num_docs * width) {
    buffers.rows.resize(num_docs * width);
  }
  if (buffers.scores.size() < num_docs) buffers.scores.resize(num_docs);
  for (size_t i = 0; i < num_docs; ++i) {
    absl::Status status = DocumentToRow(
        documents[static_cast<int>(i)], i, context,
        absl::MakeSpan(buffers.rows.data() + i * width, width));
    if (!status.ok()) return status;
  }
  for (size_t begin = 0; begin < num_docs; begin += kChunkDocs) {
    absl::Status status = interrupted();
    if (!status.ok()) return status;
    const size_t count = std::min(kChunkDocs, num_docs - begin);
    scorer.Score(absl::MakeConstSpan(buffers.rows.data() + begin * width,
                                     count * width),
                 count, absl::MakeSpan(buffers.scores.data() + begin, count));
  }
  return absl::MakeConstSpan(buffers.scores.data(), num_docs);
}

}  // namespace plrank::server
