#ifndef PLRANK_SERVER_RANKER_SERVICE_H_
#define PLRANK_SERVER_RANKER_SERVICE_H_

#include "grpcpp/grpcpp.h"
#include "plrank/v1/ranker.grpc.pb.h"
#include "server/admin_access.h"
#include "server/impression_log.h"
#include "server/lifecycle/scan_scheduler.h"
#include "server/lifecycle/version_manager.h"
#include "server/memory_releaser.h"
#include "server/request_limits.h"
#include "server/server_metrics.h"
#include "server/shadow_scoring.h"
#include "server/stream_guard.h"

namespace plrank::server {

// plrank.v1.Ranker over a VersionManager (sync API: each RPC runs on a gRPC
// server thread). Every RPC resolves its model version once from the current
// snapshot and holds it to the end, checks the client's deadline/cancellation
// before and during scoring, and is recorded in `metrics` (optional). The
// admin RPCs (GetModelStatus, ListModels, ReloadModels) answer
// PERMISSION_DENIED to callers `admin` does not let in. Errors of Rank and
// Evaluate name no file and no other model than the requested one. Large
// Rank/Evaluate requests are reported to `releaser` (optional), which returns
// their memory to the system once they are freed. Answered Rank queries
// (alone or in a RankBatch) are offered to `shadow` (optional) for shadow
// scoring, and GetModelStatus reports its summary for a model with a
// shadow configured. Answered queries with a sampling spec are offered to
// `impressions` (optional), the impression log; when it is set, such an
// answer always carries a request_id (the request's or a generated one).
class RankerService final : public v1::Ranker::Service {
 public:
  // `scanner` runs the scans ReloadModels asks for (its thread, not the
  // RPC's, loads the models).
  RankerService(VersionManager* manager, ScanScheduler* scanner,
                ServerMetrics* metrics, RequestLimits limits,
                AdminAccessPolicy admin = {},
                MemoryReleaser* releaser = nullptr,
                ShadowScorer* shadow = nullptr,
                ImpressionLogger* impressions = nullptr);

  // EvaluateStream is admitted and timed by `guard` (optional, not owned;
  // set before serving).
  void SetStreamGuard(StreamGuard* guard) { stream_guard_ = guard; }

  grpc::Status Rank(grpc::ServerContext* context,
                    const v1::RankRequest* request,
                    v1::RankResponse* response) override;
  // Each query is recorded as a Rank (requests, duration, documents,
  // scoring time) and the batch once as method="RankBatch".
  grpc::Status RankBatch(grpc::ServerContext* context,
                         const v1::RankBatchRequest* request,
                         v1::RankBatchResponse* response) override;
  grpc::Status Explain(grpc::ServerContext* context,
                       const v1::ExplainRequest* request,
                       v1::ExplainResponse* response) override;
  grpc::Status Evaluate(grpc::ServerContext* context,
                        const v1::EvaluateRequest* request,
                        v1::EvaluateResponse* response) override;
  grpc::Status EvaluateStream(
      grpc::ServerContext* context,
      grpc::ServerReader<v1::EvaluateRequest>* reader,
      v1::EvaluateResponse* response) override;
  // Not an admin RPC: what any client needs to build requests.
  grpc::Status GetModelMetadata(
      grpc::ServerContext* context, const v1::GetModelMetadataRequest* request,
      v1::GetModelMetadataResponse* response) override;
  grpc::Status GetModelStatus(grpc::ServerContext* context,
                              const v1::GetModelStatusRequest* request,
                              v1::GetModelStatusResponse* response) override;
  grpc::Status ListModels(grpc::ServerContext* context,
                          const v1::ListModelsRequest* request,
                          v1::ListModelsResponse* response) override;
  grpc::Status ReloadModels(grpc::ServerContext* context,
                            const v1::ReloadModelsRequest* request,
                            v1::ReloadModelsResponse* response) override;

 private:
  // Hands an answered query to shadow scoring when its model has a shadow.
  void OfferShadow(const ServingSnapshot& snapshot,
                   const std::shared_ptr<const ServableVersion>& version,
                   const v1::RankRequest& request,
                   const v1::RankResponse& response);
  // Ranks one query, writing every document's score to the impression log
  // when it is configured and the query is sampled.
  absl::Status RankAndLog(const ServableVersion& version,
                          const v1::RankRequest& request,
                          grpc::ServerContext* context,
                          v1::RankResponse* response);

  VersionManager* const manager_;
  ScanScheduler* const scanner_;
  ServerMetrics* const metrics_;
  const RequestLimits limits_;
  const AdminAccessPolicy admin_;
  MemoryReleaser* const releaser_;
  ShadowScorer* const shadow_;
  ImpressionLogger* const impressions_;
  StreamGuard* stream_guard_ = nullptr;
};

}  // namespace plrank::server

#endif  // PLRANK_SERVER_RANKER_SERVICE_H_
