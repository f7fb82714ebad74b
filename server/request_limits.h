#ifndef PLRANK_SERVER_REQUEST_LIMITS_H_
#define PLRANK_SERVER_REQUEST_LIMITS_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace plrank::server {

// Per-request bounds; exceeding one is RESOURCE_EXHAUSTED.
struct RequestLimits {
  // Documents in one Rank request, and in one query of an Evaluate request.
  uint32_t max_documents_per_request = 10000;
  // Queries in one EvaluateRequest message.
  uint32_t max_queries_per_request = 10000;
  // Documents over a whole Evaluate call or EvaluateStream stream (the
  // server keeps one score and label per document until the end).
  uint64_t max_evaluate_documents = 5000000;
  // Work of one Explain request: documents x the version's TreeSHAP cost
  // per document (sum over trees of leaves x depth^2). About 1 to 3 s of
  // one core at the default.
  uint64_t max_explain_cost = 1000000000;
  // Queries in one RankBatch request, and documents over all of them (each
  // query is also held to max_documents_per_request).
  uint32_t max_batch_queries = 1000;
  uint64_t max_batch_documents = 100000;
  // ndcg_at cut-offs of one Evaluate call: each costs a pass over every
  // query and, with per_query, one value per query in the response.
  uint32_t max_ndcg_cutoffs = 32;
  // The largest response the server may send (its max message size,
  // filled in by RankingServer): a response estimated above it is refused
  // before it is built.
  uint64_t max_response_bytes = 64 << 20;
};

// The document count of one Rank or Explain request (or one query):
// INVALID_ARGUMENT when empty, RESOURCE_EXHAUSTED above
// max_documents_per_request, with a message saying what to do.
inline absl::Status CheckDocumentCount(size_t num_docs,
                                       const RequestLimits& limits) {
  if (num_docs == 0) {
    return absl::InvalidArgumentError("the request has no documents");
  }
  if (num_docs > limits.max_documents_per_request) {
    return absl::ResourceExhaustedError(absl::StrCat(
        num_docs, " documents in one request; this server accepts at most ",
        limits.max_documents_per_request, " (split the request)"));
  }
  return absl::OkStatus();
}

// The bounds of one request carrying several queries (a RankBatch, a
// ModelInfer with query offsets): RESOURCE_EXHAUSTED above
// max_batch_queries queries or max_batch_documents documents over them.
// `request` names the request ("RankBatch"), `documents_word` what its
// documents are called ("documents", "rows").
inline absl::Status CheckBatchCounts(uint64_t queries, uint64_t documents,
                                     const RequestLimits& limits,
                                     absl::string_view request,
                                     absl::string_view documents_word) {
  if (queries > limits.max_batch_queries) {
    return absl::ResourceExhaustedError(absl::StrCat(
        queries, " queries in one ", request,
        " request; this server accepts at most ", limits.max_batch_queries,
        " (split the request)"));
  }
  if (documents > limits.max_batch_documents) {
    return absl::ResourceExhaustedError(absl::StrCat(
        documents, " ", documents_word, " over the queries of one ", request,
        " request; this server accepts at most ", limits.max_batch_documents,
        " (split the request)"));
  }
  return absl::OkStatus();
}

}  // namespace plrank::server

#endif  // PLRANK_SERVER_REQUEST_LIMITS_H_
