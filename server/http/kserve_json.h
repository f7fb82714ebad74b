#ifndef PLRANK_SERVER_HTTP_KSERVE_JSON_H_
#define PLRANK_SERVER_HTTP_KSERVE_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "inference/grpc_predict_v2.pb.h"

namespace plrank::server {

// The Open Inference Protocol's REST JSON objects, converted to and from its
// gRPC messages so both ports share one implementation (OpenInference).

// An inference request JSON object ({"id", "parameters", "inputs": [{"name",
// "shape", "datatype", "data"}], "outputs": [{"name"}]}) for model `name`
// and version `version` (from the URL). `data` may be flat or nested
// row-major; FP32/FP64 accept null for NaN (a missing feature). Datatypes
// FP32, FP64, INT32 and INT64 are read; others are INVALID_ARGUMENT, as are
// malformed JSON, nesting deeper than 32 and wrongly typed fields (the
// message names the field).
absl::StatusOr<inference::ModelInferRequest> InferRequestFromJson(
    absl::string_view body, absl::string_view name, absl::string_view version);

// The inference response JSON object ({"model_name", "model_version", "id",
// "outputs": [{"name", "datatype", "shape", "data"}]}).
std::string InferResponseToJson(const inference::ModelInferResponse& response);

// {"name", "versions", "platform", "inputs", "outputs"}.
std::string ModelMetadataToJson(
    const inference::ModelMetadataResponse& metadata);

// {"name", "version", "extensions"}.
std::string ServerMetadataToJson(
    const inference::ServerMetadataResponse& metadata);

// {"error": message}, the protocol's error object.
std::string ErrorJson(absl::string_view message);

}  // namespace plrank::server

#endif  // PLRANK_SERVER_HTTP_KSERVE_JSON_H_
