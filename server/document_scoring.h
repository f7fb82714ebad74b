#ifndef PLRANK_SERVER_DOCUMENT_SCORING_H_
#define PLRANK_SERVER_DOCUMENT_SCORING_H_

#include <cstdint>
#include "absl/strings/string_view.h"

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/scoring/forest_scorer.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "plrank/v1/ranker.pb.h"

namespace plrank::server {

using Documents = google::protobuf::RepeatedPtrField<v1::Document>;

// Returns OK to go on, or the status to abort with (CANCELLED,
// DEADLINE_EXCEEDED) when the client gave up.
using InterruptCheck = absl::FunctionRef<absl::Status()>;

// Scores documents with no per-document heap allocation. All documents are
// validated first; then rows are converted into a per-thread buffer and
// scored chunk by chunk, with an interrupt check before each chunk. Rows
// hold only the features the model reads (ForestScorer::row_width) and a
// chunk holds at most kChunkRowFloats of them (at least one document), so
// the buffer stays small whatever the request's size or the model's
// declared width; a buffer grown beyond that for one very wide row is freed
// before Score returns. The buffer stays all zeros between chunks, so a
// sparse document costs its non-zeros (written, then cleared after
// scoring), not the row width: time follows the values sent and the
// features the splits read.
class DocumentScorer {
 public:
  // Most documents scored between two interrupt checks.
  static constexpr size_t kChunkDocs = 4096;
  // Most row floats converted at once (1 MiB).
  static constexpr size_t kChunkRowFloats = size_t{1} << 18;

  // Validates `documents` against the model's feature count and scores them
  // into the returned span (valid until the next call on this thread).
  // INVALID_ARGUMENT, naming `context` and the document, when a document has
  // no features, a dense vector of the wrong length, sparse indices not
  // strictly increasing or >= num_features, index/value counts that differ,
  // or an infinite value (NaN is allowed and means missing).
  static absl::StatusOr<absl::Span<const double>> Score(
      const ForestScorer& scorer, const Documents& documents,
      absl::string_view context, InterruptCheck interrupted);
};

// Checks `document` against a model of `num_features` features; see
// DocumentScorer::Score for the rules.
absl::Status ValidateDocument(const v1::Document& document, size_t index,
                              absl::string_view context, size_t num_features);

// Fills `row` with the first row.size() features of a validated document
// (absent sparse features are 0).
void FillRow(const v1::Document& document, absl::Span<float> row);

}  // namespace plrank::server

#endif  // PLRANK_SERVER_DOCUMENT_SCORING_H_
