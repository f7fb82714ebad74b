#ifndef PLRANK_SERVER_KSERVE_INFERENCE_SERVICE_H_
#define PLRANK_SERVER_KSERVE_INFERENCE_SERVICE_H_

#include "grpcpp/grpcpp.h"
#include "inference/grpc_predict_v2.grpc.pb.h"
#include "server/kserve/open_inference.h"

namespace plrank::server {

// inference.GRPCInferenceService (the Open Inference Protocol's gRPC form)
// on the server's gRPC port, over OpenInference (see open_inference.h for
// how a ranking model maps onto tensors). None of its RPCs is an admin RPC:
// they are answered to every caller, as Rank is. Client deadlines and
// cancellation are checked between scoring chunks.
class InferenceService final
    : public inference::GRPCInferenceService::Service {
 public:
  explicit InferenceService(OpenInference* inference);

  grpc::Status ServerLive(grpc::ServerContext* context,
                          const inference::ServerLiveRequest* request,
                          inference::ServerLiveResponse* response) override;
  grpc::Status ServerReady(grpc::ServerContext* context,
                           const inference::ServerReadyRequest* request,
                           inference::ServerReadyResponse* response) override;
  grpc::Status ModelReady(grpc::ServerContext* context,
                          const inference::ModelReadyRequest* request,
                          inference::ModelReadyResponse* response) override;
  grpc::Status ServerMetadata(
      grpc::ServerContext* context,
      const inference::ServerMetadataRequest* request,
      inference::ServerMetadataResponse* response) override;
  grpc::Status ModelMetadata(
      grpc::ServerContext* context,
      const inference::ModelMetadataRequest* request,
      inference::ModelMetadataResponse* response) override;
  grpc::Status ModelInfer(grpc::ServerContext* context,
                          const inference::ModelInferRequest* request,
                          inference::ModelInferResponse* response) override;

 private:
  OpenInference* const inference_;
};

}  // namespace plrank::server

#endif  // PLRANK_SERVER_KSERVE_INFERENCE_SERVICE_H_
