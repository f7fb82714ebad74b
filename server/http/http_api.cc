#include "server/http/http_api.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"
#include "server/http/gateway_protocol.h"
#include "server/http/json_text.h"
#include "server/http/kserve_json.h"

namespace plrank::server {
namespace {

constexpr char kProtocol[] = "http";

HttpResponse Json(int status, std::string body) {
  return HttpResponse{status, "application/json", std::move(body)};
}

HttpResponse KserveError(const absl::Status& status) {
  return Json(HttpStatusOf(status.code()), ErrorJson(status.message()));
}

// google.rpc.Status in JSON: {"code": n, "message": "..."}.
std::string StatusJson(absl::StatusCode code, absl::string_view message) {
  return JsonText(
      {{"code", static_cast<int>(code)}, {"message", std::string(message)}});
}

HttpResponse RankerError(absl::StatusCode code, absl::string_view message) {
  return Json(HttpStatusOf(code), StatusJson(code, message));
}

HttpResponse NoRoute(const HttpRequest& request) {
  return Json(404, ErrorJson(absl::StrCat("no route for ", request.method, " ",
                                          request.target)));
}

HttpResponse WrongMethod(const HttpRequest& request, const char* allowed) {
  return Json(405, ErrorJson(absl::StrCat(request.target, " takes ", allowed,
                                          ", not ", request.method)));
}

// Calls one unary Ranker RPC with the JSON body as its request.
template <typename Request, typename Response, typename Method>
HttpResponse CallRanker(v1::Ranker::Stub* stub, Method method,
                        const std::string& body, Request request = {}) {
  if (!body.empty()) {
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;
    const auto parsed =
        google::protobuf::util::JsonStringToMessage(body, &request, options);
    if (!parsed.ok()) {
      return RankerError(absl::StatusCode::kInvalidArgument,
                         absl::StrCat("the body is not a ",
                                      Request::descriptor()->full_name(),
                                      " in JSON: ", parsed.message().as_string()));
    }
  }
  grpc::ClientContext context;
  context.AddMetadata(std::string(kGatewayProtocolKey), kProtocol);
  Response response;
  const grpc::Status status = (stub->*method)(&context, request, &response);
  if (!status.ok()) {
    return RankerError(static_cast<absl::StatusCode>(status.error_code()),
                       status.error_message());
  }
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  const auto printed =
      google::protobuf::util::MessageToJsonString(response, &json, options);
  if (!printed.ok()) {
    return RankerError(absl::StatusCode::kInternal,
                       absl::StrCat("cannot write the response as JSON: ",
                                    printed.message().as_string()));
  }
  return Json(200, std::move(json));
}

}  // namespace

int HttpStatusOf(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kCancelled:
      return 499;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted:
      return 409;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kUnimplemented:
      return 501;
    case absl::StatusCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

HttpApi::HttpApi(OpenInference* inference,
                 std::shared_ptr<grpc::Channel> ranker)
    : inference_(inference), ranker_(v1::Ranker::NewStub(std::move(ranker))) {}

HttpResponse HttpApi::Handle(const HttpRequest& request) {
  std::string path = request.target.substr(0, request.target.find('?'));
  std::vector<std::string> parts =
      absl::StrSplit(path, '/', absl::SkipEmpty());
  if (!parts.empty() && parts[0] == "v2") return KserveRoute(request, parts);
  if (!parts.empty() && parts[0] == "v1") return RankerRoute(request, parts);
  return NoRoute(request);
}

HttpResponse HttpApi::KserveRoute(const HttpRequest& request,
                             const std::vector<std::string>& path) {
  const bool get = request.method == "GET";
  if (path.size() == 1) {
    if (!get) return WrongMethod(request, "GET");
    return Json(200, ServerMetadataToJson(inference_->ServerMetadata(kProtocol)));
  }
  if (path.size() == 3 && path[1] == "health") {
    if (!get) return WrongMethod(request, "GET");
    if (path[2] == "live") {
      const bool live = inference_->ServerLive(kProtocol).live();
      return Json(live ? 200 : 400, live ? "{\"live\":true}" : "{\"live\":false}");
    }
    if (path[2] == "ready") {
      const bool ready = inference_->ServerReady(kProtocol).ready();
      return Json(ready ? 200 : 400,
                  ready ? "{\"ready\":true}" : "{\"ready\":false}");
    }
    return NoRoute(request);
  }
  if (path.size() < 3 || path[1] != "models") return NoRoute(request);
  // v2/models/M [versions/V] [ready | infer]
  const std::string& name = path[2];
  std::string version;
  size_t next = 3;
  if (path.size() >= 5 && path[3] == "versions") {
    version = path[4];
    next = 5;
  }
  if (path.size() == next) {
    if (!get) return WrongMethod(request, "GET");
    inference::ModelMetadataRequest metadata_request;
    metadata_request.set_name(name);
    metadata_request.set_version(version);
    auto metadata = inference_->ModelMetadata(metadata_request, kProtocol);
    if (!metadata.ok()) return KserveError(metadata.status());
    return Json(200, ModelMetadataToJson(*metadata));
  }
  if (path.size() != next + 1) return NoRoute(request);
  if (path[next] == "ready") {
    if (!get) return WrongMethod(request, "GET");
    inference::ModelReadyRequest ready_request;
    ready_request.set_name(name);
    ready_request.set_version(version);
    auto ready = inference_->ModelReady(ready_request, kProtocol);
    if (!ready.ok()) return KserveError(ready.status());
    return Json(ready->ready() ? 200 : 400,
                JsonText({{"name", name}, {"ready", ready->ready()}}));
  }
  if (path[next] == "infer") {
    if (request.method != "POST") return WrongMethod(request, "POST");
    auto infer_request = InferRequestFromJson(request.body, name, version);
    if (!infer_request.ok()) return KserveError(infer_request.status());
    inference::ModelInferResponse response;
    const absl::Status status = inference_->ModelInfer(
        *infer_request, [] { return absl::OkStatus(); }, kProtocol, &response);
    if (!status.ok()) return KserveError(status);
    return Json(200, InferResponseToJson(response));
  }
  return NoRoute(request);
}

HttpResponse HttpApi::RankerRoute(const HttpRequest& request,
                             const std::vector<std::string>& path) {
  using Stub = v1::Ranker::Stub;
  // GET v1/models/M[/versions/V | /labels/L]/metadata
  if (path.size() >= 4 && path[1] == "models" && path.back() == "metadata") {
    if (request.method != "GET") return WrongMethod(request, "GET");
    v1::GetModelMetadataRequest metadata;
    metadata.mutable_model_spec()->set_name(path[2]);
    if (path.size() == 6 && path[3] == "versions") {
      int64_t version = 0;
      if (!absl::SimpleAtoi(path[4], &version) || version <= 0) {
        return RankerError(
            absl::StatusCode::kInvalidArgument,
            absl::StrCat("version '", path[4], "' is not a positive integer"));
      }
      metadata.mutable_model_spec()->set_version(version);
    } else if (path.size() == 6 && path[3] == "labels") {
      metadata.mutable_model_spec()->set_version_label(path[4]);
    } else if (path.size() != 4) {
      return NoRoute(request);
    }
    return CallRanker<v1::GetModelMetadataRequest,
                      v1::GetModelMetadataResponse>(
        ranker_.get(), &Stub::GetModelMetadata, "", metadata);
  }
  if (path.size() != 2) return NoRoute(request);
  const std::string& method = path[1];
  const bool known = method == "rank" || method == "rank_batch" ||
                     method == "explain" || method == "evaluate" ||
                     method == "metadata";
  if (!known) return NoRoute(request);
  if (request.method != "POST") return WrongMethod(request, "POST");
  if (request.body.empty()) {
    return RankerError(absl::StatusCode::kInvalidArgument,
                       "the request body is empty (send the request as JSON)");
  }
  if (method == "rank") {
    return CallRanker<v1::RankRequest, v1::RankResponse>(
        ranker_.get(), &Stub::Rank, request.body);
  }
  if (method == "rank_batch") {
    return CallRanker<v1::RankBatchRequest, v1::RankBatchResponse>(
        ranker_.get(), &Stub::RankBatch, request.body);
  }
  if (method == "explain") {
    return CallRanker<v1::ExplainRequest, v1::ExplainResponse>(
        ranker_.get(), &Stub::Explain, request.body);
  }
  if (method == "evaluate") {
    return CallRanker<v1::EvaluateRequest, v1::EvaluateResponse>(
        ranker_.get(), &Stub::Evaluate, request.body);
  }
  return CallRanker<v1::GetModelMetadataRequest, v1::GetModelMetadataResponse>(
      ranker_.get(), &Stub::GetModelMetadata, request.body);
}

}  // namespace plrank::server
