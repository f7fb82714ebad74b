#ifndef PLRANK_SERVER_HTTP_HTTP_API_H_
#define PLRANK_SERVER_HTTP_HTTP_API_H_

#include <memory>

#include "grpcpp/grpcpp.h"
#include "plrank/v1/ranker.grpc.pb.h"
#include "server/http/http_server.h"
#include "server/kserve/open_inference.h"

namespace plrank::server {

// The routes of the HTTP port (--http_port):
//   Open Inference Protocol (KServe v2) REST, over `inference`:
//     GET  /v2                                     server metadata
//     GET  /v2/health/live, /v2/health/ready       200, or 400 when not ready
//     GET  /v2/models/M[/versions/V]               model metadata
//     GET  /v2/models/M[/versions/V]/ready         200, or 400 when not ready
//     POST /v2/models/M[/versions/V]/infer         inference
//   errors as {"error": "..."};
//   plrank.v1.Ranker in protobuf's JSON mapping, over `ranker` (a channel to
//   this server's own gRPC port, in-process: limits, metrics, admin rules
//   are the gRPC ones):
//     POST /v1/rank, /v1/rank_batch, /v1/explain, /v1/evaluate, /v1/metadata
//       (bodies RankRequest, RankBatchRequest, ExplainRequest,
//       EvaluateRequest, GetModelMetadataRequest)
//     GET  /v1/models/M[/versions/V | /labels/L]/metadata
//   errors as {"code": <gRPC code>, "message": "..."} (google.rpc.Status).
// HTTP statuses follow the gRPC codes (400 INVALID_ARGUMENT, 404 NOT_FOUND,
// 429 RESOURCE_EXHAUSTED, 503 UNAVAILABLE, ...). The admin RPCs have no
// HTTP form.
class HttpApi {
 public:
  HttpApi(OpenInference* inference, std::shared_ptr<grpc::Channel> ranker);

  HttpResponse Handle(const HttpRequest& request);

 private:
  HttpResponse KserveRoute(const HttpRequest& request,
                      const std::vector<std::string>& path);
  HttpResponse RankerRoute(const HttpRequest& request,
                      const std::vector<std::string>& path);

  OpenInference* const inference_;
  std::unique_ptr<v1::Ranker::Stub> ranker_;
};

// The HTTP status of a gRPC / absl status code (as grpc-gateway maps them).
int HttpStatusOf(absl::StatusCode code);

}  // namespace plrank::server

#endif  // PLRANK_SERVER_HTTP_HTTP_API_H_
