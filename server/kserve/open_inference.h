#ifndef PLRANK_SERVER_KSERVE_OPEN_INFERENCE_H_
#define PLRANK_SERVER_KSERVE_OPEN_INFERENCE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "inference/grpc_predict_v2.pb.h"
#include "server/document_scoring.h"
#include "server/lifecycle/model_status.h"
#include "server/lifecycle/version_manager.h"
#include "server/request_limits.h"
#include "server/server_metrics.h"

namespace plrank::server {

// The Open Inference Protocol (KServe v2) over the serving lifecycle,
// transport-free: the gRPC service (inference_service.h) and the HTTP port
// (server/http/) both call it with their `protocol` ("grpc", "http") and
// translate its statuses. A ranking model is exposed as:
//   inputs   features       FP32  [N, F]  N documents, F = the model's
//                                         feature count (NaN = missing)
//            query_offsets  INT64 [Q+1]   optional: query q holds rows
//                                         offsets[q] .. offsets[q+1]-1
//                                         (0 first, N last; the trailing N
//                                         may be left out); absent = one
//                                         query of all N rows
//   outputs  scores         FP32  [N]     Rank's score of each row
//            scores_fp64    FP64  [N]     the same, exact (only on request)
//            ranks          INT64 [N]     1-based rank within its query
//            order          INT64 [N]     per query in turn, its rows
//                                         (0-based over the tensor) best
//                                         first
// model_version "" = the default version, a positive integer pins it, any
// other string is a version label of the server config (as
// ModelSpec.version_label). Limits: each query as one Rank request
// (max_documents_per_request), a request with query_offsets as a RankBatch
// (max_batch_queries, max_batch_documents). Every call is recorded in
// `metrics` (optional) as method ServerLive, ..., ModelInfer.
class OpenInference {
 public:
  OpenInference(VersionManager* manager, ServerMetrics* metrics,
                RequestLimits limits);

  inference::ServerLiveResponse ServerLive(absl::string_view protocol);
  // Ready when some model has a version to serve (what gRPC health says).
  inference::ServerReadyResponse ServerReady(absl::string_view protocol);
  // ready = the model and version resolve to a loaded version. An invalid
  // request (empty name) is INVALID_ARGUMENT; an unknown model or version
  // is ready = false, not an error.
  absl::StatusOr<inference::ModelReadyResponse> ModelReady(
      const inference::ModelReadyRequest& request, absl::string_view protocol);
  inference::ServerMetadataResponse ServerMetadata(absl::string_view protocol);
  // Resolution errors as for Rank (NOT_FOUND, UNAVAILABLE, ...).
  absl::StatusOr<inference::ModelMetadataResponse> ModelMetadata(
      const inference::ModelMetadataRequest& request,
      absl::string_view protocol);
  // INVALID_ARGUMENT naming the tensor for a malformed request,
  // RESOURCE_EXHAUSTED over the limits, resolution errors as for Rank.
  absl::Status ModelInfer(const inference::ModelInferRequest& request,
                          InterruptCheck interrupted,
                          absl::string_view protocol,
                          inference::ModelInferResponse* response);

 private:
  VersionManager* const manager_;
  ServerMetrics* const metrics_;
  const RequestLimits limits_;
};

// The selector of a (model name, KServe version string) pair: "" = default,
// digits = pin, anything else = label. INVALID_ARGUMENT for an empty name
// or version "0".
absl::StatusOr<VersionSelector> InferenceSelector(absl::string_view name,
                                                  absl::string_view version);

}  // namespace plrank::server

#endif  // PLRANK_SERVER_KSERVE_OPEN_INFERENCE_H_
