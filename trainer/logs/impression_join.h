#ifndef PLRANK_TRAINER_LOGS_IMPRESSION_JOIN_H_
#define PLRANK_TRAINER_LOGS_IMPRESSION_JOIN_H_

// plrank-logs join: impression logs (server/impression_log.h) + clicks ->
// training and evaluation files (docs/clicks-serving.md, "Joined files").

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "trainer/logs/pooled_labels.h"

namespace plrank::logs {

struct JoinOptions {
  std::string impressions_dir;  // read: impressions-*.log, in name order
  std::string clicks_file;      // `request_id document_id` lines
  std::string output;           // D; side files D.position, D.propensity,
                                // D.all, D.all.position, D.all.marginals
  // Draws per sampled request for the position marginals (>= 1).
  size_t marginal_samples = 1000;
  // grades > 0: also D.pooled, the requests of each query id pooled into
  // one list of its distinct documents with IPS relevance labels
  // (trainer/logs/pooled_labels.h).
  PooledLabelOptions pooled;
};

struct JoinSummary {
  size_t files = 0;
  size_t requests = 0;
  size_t shown_documents = 0;
  size_t candidate_documents = 0;
  size_t clicks = 0;              // matched to a shown document
  size_t unmatched_clicks = 0;    // request or document not logged as shown
  size_t duplicate_requests = 0;  // a request id logged again (skipped)
  size_t pooled_queries = 0;      // D.pooled (0 without --pooled_grades)
  size_t pooled_documents = 0;
  double pooled_prior = 0;        // clicks per unit of exposure
};

absl::StatusOr<JoinSummary> JoinImpressions(const JoinOptions& options);

// Reverses the log's percent-encoding of ids.
std::string UnescapeLogToken(absl::string_view token);

}  // namespace plrank::logs

#endif  // PLRANK_TRAINER_LOGS_IMPRESSION_JOIN_H_
