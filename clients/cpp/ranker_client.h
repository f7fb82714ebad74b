#ifndef PLRANK_CLIENTS_CPP_RANKER_CLIENT_H_
#define PLRANK_CLIENTS_CPP_RANKER_CLIENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "core/data/dataset.h"
#include "core/metrics/ranking_metrics.h"
#include "grpcpp/channel.h"
#include "grpcpp/support/status.h"
#include "plrank/v1/ranker.grpc.pb.h"

namespace plrank {

// Which model serves a call: a name plus an optional pinned version or label
// (version wins when both are set; neither = the server's default version).
struct ModelRef {
  std::string name;
  int64_t version = 0;
  std::string label;

  v1::ModelSpec ToProto() const;
};

struct RankerClientOptions {
  // Per-call deadline of Rank, RankBatch, Explain, GetModelStatus, ListModels
  // and ReloadModels.
  absl::Duration deadline = absl::Seconds(10);
  // Deadline of one whole Evaluate call (all of its messages).
  absl::Duration evaluate_deadline = absl::Minutes(10);
  // PEM root certificates: set = TLS to the server, empty = plaintext.
  std::string tls_root_cert_file;
  // PEM client certificate chain and key, for servers that require mTLS
  // (both or neither; only with tls_root_cert_file).
  std::string tls_cert_file;
  std::string tls_key_file;
  // Evaluate sends one unary request when the dataset has at most this many
  // queries and fits in evaluate_message_bytes; otherwise it streams
  // (EvaluateStream) messages of at most that size (at least one query each).
  int evaluate_unary_max_queries = 256;
  size_t evaluate_message_bytes = 2 << 20;  // gRPC's default limit is 4 MiB
  // Largest response the client accepts (per-query metrics can be large).
  int max_receive_message_bytes = 64 << 20;
};

struct EvaluateOptions {
  std::vector<uint32_t> ndcg_at;  // empty = the server's 1, 3, 5, 10
  bool per_query = false;
  // NDCG/MAP of a query without relevant document: 1 (the default), 0, or
  // left out of the means. kZero needs a server that knows the convention
  // (an older one answers FAILED_PRECONDITION through this client).
  EmptyQueryNdcg empty_query = EmptyQueryNdcg::kOne;
};

// gRPC status -> absl::Status: same code (the enums agree), server's message.
absl::Status FromGrpcStatus(const grpc::Status& status);

// A synchronous client of plrank.v1.Ranker. Thread-safe: calls may be made
// concurrently from several threads (gRPC stubs are thread-safe).
class RankerClient {
 public:
  // Connects lazily to `target` ("host:port", any gRPC target URI). Fails
  // only when the options are unusable (e.g. unreadable certificate file).
  static absl::StatusOr<std::unique_ptr<RankerClient>> Create(
      const std::string& target, const RankerClientOptions& options = {});
  RankerClient(std::shared_ptr<grpc::Channel> channel,
               const RankerClientOptions& options);

  // Scores the documents of one query; response sorted by descending score
  // (top_k = 0: every document).
  absl::StatusOr<v1::RankResponse> Rank(const v1::RankRequest& request);
  absl::StatusOr<v1::RankResponse> Rank(const ModelRef& model,
                                        const std::string& query_id,
                                        absl::Span<const v1::Document> documents,
                                        uint32_t top_k = 0);
  // Dense rows, row-major (rows.size() / num_features documents with ids
  // "0", "1", ...).
  absl::StatusOr<v1::RankResponse> RankDense(const ModelRef& model,
                                             const std::string& query_id,
                                             absl::Span<const float> rows,
                                             int32_t num_features,
                                             uint32_t top_k = 0);
  // Query `query` of a dataset (ids = input line indices, see
  // dataset_documents.h). With `sampling` (optional) the ranking is drawn
  // from the model's Plackett-Luce policy (RankRequest.sampling); a nonzero
  // seed is used as seed + query, so the queries of one seed get
  // independent draws and each is replayable.
  absl::StatusOr<v1::RankResponse> RankQuery(
      const ModelRef& model, const Dataset& data, size_t query,
      uint32_t top_k = 0, const v1::SamplingSpec* sampling = nullptr);

  // Several queries in one RankBatch call. The outer status is the call's
  // (e.g. UNAVAILABLE, or RESOURCE_EXHAUSTED over the server's batch
  // limits); inside, one result per request in order: its response, or the
  // status that query failed with (same codes and messages as Rank).
  absl::StatusOr<std::vector<absl::StatusOr<v1::RankResponse>>> RankBatch(
      absl::Span<const v1::RankRequest> requests);
  // Queries [begin, end) of a dataset in one RankBatch call (`sampling` as
  // for RankQuery, seed + query for each).
  absl::StatusOr<std::vector<absl::StatusOr<v1::RankResponse>>> RankQueries(
      const ModelRef& model, const Dataset& data, size_t begin, size_t end,
      uint32_t top_k = 0, const v1::SamplingSpec* sampling = nullptr);

  // Feature contributions (TreeSHAP) to the scores of one query's
  // documents; top_k > 0 keeps the k largest |contribution| per document.
  absl::StatusOr<v1::ExplainResponse> Explain(
      const v1::ExplainRequest& request);
  // Query `query` of a dataset (ids = input line indices).
  absl::StatusOr<v1::ExplainResponse> ExplainQuery(const ModelRef& model,
                                                   const Dataset& data,
                                                   size_t query,
                                                   uint32_t top_k = 0);

  // Metrics of the model on every query of `data`: one Evaluate request for a
  // small dataset, an EvaluateStream of bounded messages for a large one.
  absl::StatusOr<v1::EvaluateResponse> Evaluate(const ModelRef& model,
                                                const Dataset& data,
                                                const EvaluateOptions& options = {});

  absl::StatusOr<v1::ModelStatus> GetModelStatus(const std::string& name);
  // The whole GetModelStatus answer: the status and, for a model with shadow
  // scoring configured, its shadow summary.
  absl::StatusOr<v1::GetModelStatusResponse> GetFullModelStatus(
      const std::string& name);
  absl::StatusOr<std::vector<v1::ModelStatus>> ListModels();
  absl::StatusOr<v1::ReloadModelsResponse> ReloadModels();

  v1::Ranker::Stub& stub() { return *stub_; }

 private:
  void SetDeadline(grpc::ClientContext* context, absl::Duration deadline) const;
  v1::EvaluateRequest EvaluateHeader(const ModelRef& model,
                                     const EvaluateOptions& options) const;

  RankerClientOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Ranker::Stub> stub_;
};

// The VersionStatus the model reference resolves to in `status`
// (pinned version, label, or default), or NOT_FOUND naming what is missing.
absl::StatusOr<v1::VersionStatus> ResolveVersion(const v1::ModelStatus& status,
                                                 const ModelRef& model);

}  // namespace plrank

#endif  // PLRANK_CLIENTS_CPP_RANKER_CLIENT_H_
