#include "server/document_scoring.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "server/lifecycle/echoed_text.h"

namespace plrank::server {
namespace {

// Score buffers larger than this (doubles) are freed at the next call on the
// thread; the span returned by Score must stay valid until then.
constexpr size_t kRetainedScores = size_t{1} << 16;

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
                                                           EchoedText(document.id()),
                                                           "')"));
}

// The row buffer of a thread is all zeros between chunks: a sparse document
// then costs its non-zeros to write and to clear again, not the width of
// the row (a model reading feature 2^24 - 1 cost 1 ms per document to fill,
// whatever the document held).
void WriteOntoZeros(const v1::Document& document, absl::Span<float> row) {
  if (document.features_case() == v1::Document::kDense) {
    std::memcpy(row.data(), document.dense().values().data(),
                row.size() * sizeof(float));
    return;
  }
  const auto& indices = document.sparse().indices();
  const auto& values = document.sparse().values();
  for (int i = 0; i < indices.size() && indices[i] < row.size(); ++i) {
    row[indices[i]] = values[i];
  }
}

void ClearWritten(const v1::Document& document, absl::Span<float> row) {
  if (document.features_case() == v1::Document::kDense) {
    std::fill(row.begin(), row.end(), 0.0f);
    return;
  }
  const auto& indices = document.sparse().indices();
  for (int i = 0; i < indices.size() && indices[i] < row.size(); ++i) {
    row[indices[i]] = 0.0f;
  }
}

}  // namespace

absl::Status ValidateDocument(const v1::Document& document, size_t index,
                              absl::string_view context, size_t num_features) {
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

void FillRow(const v1::Document& document, absl::Span<float> row) {
  if (document.features_case() == v1::Document::kDense) {
    std::memcpy(row.data(), document.dense().values().data(),
                row.size() * sizeof(float));
    return;
  }
  std::fill(row.begin(), row.end(), 0.0f);
  const auto& indices = document.sparse().indices();
  const auto& values = document.sparse().values();
  for (int i = 0; i < indices.size() && indices[i] < row.size(); ++i) {
    row[indices[i]] = values[i];
  }
}

absl::StatusOr<absl::Span<const double>> DocumentScorer::Score(
    const ForestScorer& scorer, const Documents& documents,
    absl::string_view context, InterruptCheck interrupted) {
  ThreadBuffers& buffers = Buffers();
  if (buffers.scores.size() > kRetainedScores) {
    std::vector<double>().swap(buffers.scores);
  }
  const size_t num_docs = static_cast<size_t>(documents.size());
  const size_t num_features = static_cast<size_t>(scorer.num_features());
  for (size_t i = 0; i < num_docs; ++i) {
    absl::Status status = ValidateDocument(documents[static_cast<int>(i)], i,
                                           context, num_features);
    if (!status.ok()) return status;
  }
  // Rows are `width` floats (what the model reads), laid out `stride`
  // apart: a model that reads no feature still gets a non-empty buffer.
  const size_t width = static_cast<size_t>(scorer.row_width());
  const size_t stride = std::max<size_t>(width, 1);
  const size_t chunk_docs =
      std::clamp<size_t>(kChunkRowFloats / stride, 1, kChunkDocs);
  if (buffers.rows.size() < std::min(chunk_docs, num_docs) * stride) {
    buffers.rows.resize(std::min(chunk_docs, num_docs) * stride);  // zeros
  }
  if (buffers.scores.size() < num_docs) buffers.scores.resize(num_docs);
  absl::Status status = absl::OkStatus();
  for (size_t begin = 0; begin < num_docs && status.ok();
       begin += chunk_docs) {
    status = interrupted();
    if (!status.ok()) break;
    const size_t count = std::min(chunk_docs, num_docs - begin);
    for (size_t i = 0; i < count; ++i) {
      WriteOntoZeros(documents[static_cast<int>(begin + i)],
                     absl::MakeSpan(buffers.rows.data() + i * stride, width));
    }
    scorer.Score(absl::MakeConstSpan(buffers.rows.data(), count * stride),
                 count, absl::MakeSpan(buffers.scores.data() + begin, count),
                 stride);
    for (size_t i = 0; i < count; ++i) {
      ClearWritten(documents[static_cast<int>(begin + i)],
                   absl::MakeSpan(buffers.rows.data() + i * stride, width));
    }
  }
  // Only a model wider than a chunk grows the row buffer past it.
  if (buffers.rows.capacity() > kChunkRowFloats) {
    std::vector<float>().swap(buffers.rows);
  }
  if (!status.ok()) return status;
  return absl::MakeConstSpan(buffers.scores.data(), num_docs);
}

}  // namespace plrank::server
