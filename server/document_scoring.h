#ifndef PLRANK_SERVER_DOCUMENT_SCORING_H_
#define PLRANK_SERVER_DOCUMENT_SCORING_H_

#include <cstdint>
#include "absl/strings/string_view.h"

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/model/forest_scorer.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "plrank/v1/ranker.pb.h"

namespace plrank::server {

using Documents = google::protobuf::RepeatedPtrField<v1::Document>;

// Returns OK to go on, or the status to abort with (CANCELLED,
// DEADLINE_EXCEEDED) when the client gave up.
using InterruptCheck = absl::FunctionRef<absl::Status()>;

// Scores documents with no per-document heap allocation: rows are converted
// into a per-thread buffer that only grows (and is released after a very
// large request), then scored in chunks with an interrupt check between
// chunks.
class DocumentScorer {
 public:
  // Documents scored between two interrupt checks.
  static constexpr size_t kChunkDocs = 4096;

  // Validates `documents` against `num_features` and scores them into
  // the returned span (valid until the next call on this thread).
  // INVALID_ARGUMENT, naming `context` and the document, when a document has
  // no features, a dense vector of the wrong length, sparse indices not
  // strictly increasing or >= num_features, index/value counts that differ,
  // or an infinite value (NaN is allowed and means missing).
  static absl::StatusOr<absl::Span<const double>> Score(
      const ForestScorer& scorer, const Documents& documents,
      absl::string_view context, InterruptCheck interrupted);
};

// Fills `row` (num_features floats) from `document`, validating it; see
// DocumentScorer::Score for the rules.
absl::Status DocumentToRow(const v1::Document& document, size_t index,
                           absl::string_view context, absl::Span<float> row);

}  // namespace plrank::server

#endif  // PLRANK_SERVER_DOCUMENT_SCORING_H_
