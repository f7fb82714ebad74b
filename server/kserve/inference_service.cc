#include "server/kserve/inference_service.h"

#include "absl/status/status.h"
#include "server/request_record.h"

namespace plrank::server {
namespace {

constexpr char kProtocol[] = "grpc";

}  // namespace

InferenceService::InferenceService(OpenInference* inference)
    : inference_(inference) {}

grpc::Status InferenceService::ServerLive(
    grpc::ServerContext*, const inference::ServerLiveRequest*,
    inference::ServerLiveResponse* response) {
  *response = inference_->ServerLive(kProtocol);
  return grpc::Status::OK;
}

grpc::Status InferenceService::ServerReady(
    grpc::ServerContext*, const inference::ServerReadyRequest*,
    inference::ServerReadyResponse* response) {
  *response = inference_->ServerReady(kProtocol);
  return grpc::Status::OK;
}

grpc::Status InferenceService::ModelReady(
    grpc::ServerContext*, const inference::ModelReadyRequest* request,
    inference::ModelReadyResponse* response) {
  auto ready = inference_->ModelReady(*request, kProtocol);
  if (!ready.ok()) return ToGrpc(ready.status());
  *response = *ready;
  return grpc::Status::OK;
}

grpc::Status InferenceService::ServerMetadata(
    grpc::ServerContext*, const inference::ServerMetadataRequest*,
    inference::ServerMetadataResponse* response) {
  *response = inference_->ServerMetadata(kProtocol);
  return grpc::Status::OK;
}

grpc::Status InferenceService::ModelMetadata(
    grpc::ServerContext*, const inference::ModelMetadataRequest* request,
    inference::ModelMetadataResponse* response) {
  auto metadata = inference_->ModelMetadata(*request, kProtocol);
  if (!metadata.ok()) return ToGrpc(metadata.status());
  *response = *metadata;
  return grpc::Status::OK;
}

grpc::Status InferenceService::ModelInfer(
    grpc::ServerContext* context, const inference::ModelInferRequest* request,
    inference::ModelInferResponse* response) {
  auto interrupted = [context] { return CheckClient(*context); };
  return ToGrpc(
      inference_->ModelInfer(*request, interrupted, kProtocol, response));
}

}  // namespace plrank::server
