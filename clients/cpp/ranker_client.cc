#include "clients/cpp/ranker_client.h"

#include <chrono>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "clients/cpp/dataset_documents.h"
#include "core/data/file_io.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace plrank {

v1::ModelSpec ModelRef::ToProto() const {
  v1::ModelSpec spec;
  spec.set_name(name);
  spec.set_version(version);
  spec.set_version_label(label);
  return spec;
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  // grpc::StatusCode and absl::StatusCode share the canonical numbering.
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

namespace {

// Certificate chains are kilobytes; a bound keeps a wrong path (a
// device, a huge file) from filling memory.
constexpr size_t kMaxPemFileBytes = size_t{16} << 20;

absl::StatusOr<std::string> ReadPem(const std::string& path) {
  absl::StatusOr<std::string> pem = ReadWholeFile(path, kMaxPemFileBytes);
  if (!pem.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read the PEM file: ", pem.status().message()));
  }
  if (pem->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": the PEM file is empty"));
  }
  return pem;
}

}  // namespace

absl::StatusOr<std::unique_ptr<RankerClient>> RankerClient::Create(
    const std::string& target, const RankerClientOptions& options) {
  if (target.empty()) {
    return absl::InvalidArgumentError("the server target (host:port) is empty");
  }
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (options.tls_root_cert_file.empty()) {
    if (!options.tls_cert_file.empty() || !options.tls_key_file.empty()) {
      return absl::InvalidArgumentError(
          "a TLS client certificate needs the TLS root certificates too");
    }
    credentials = grpc::InsecureChannelCredentials();
  } else {
    if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
      return absl::InvalidArgumentError(
          "a TLS client certificate and key go together (set both or neither)");
    }
    grpc::SslCredentialsOptions ssl;
    absl::StatusOr<std::string> roots = ReadPem(options.tls_root_cert_file);
    if (!roots.ok()) return roots.status();
    ssl.pem_root_certs = *roots;
    if (!options.tls_cert_file.empty()) {
      absl::StatusOr<std::string> chain = ReadPem(options.tls_cert_file);
      if (!chain.ok()) return chain.status();
      absl::StatusOr<std::string> key = ReadPem(options.tls_key_file);
      if (!key.ok()) return key.status();
      ssl.pem_cert_chain = *chain;
      ssl.pem_private_key = *key;
    }
    credentials = grpc::SslCredentials(ssl);
  }
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(options.max_receive_message_bytes);
  return std::make_unique<RankerClient>(
      grpc::CreateCustomChannel(target, credentials, arguments), options);
}

RankerClient::RankerClient(std::shared_ptr<grpc::Channel> channel,
                           const RankerClientOptions& options)
    : options_(options),
      channel_(std::move(channel)),
      stub_(v1::Ranker::NewStub(channel_)) {}

void RankerClient::SetDeadline(grpc::ClientContext* context,
                               absl::Duration deadline) const {
  context->set_deadline(std::chrono::system_clock::now() +
                        absl::ToChronoNanoseconds(deadline));
}

absl::StatusOr<v1::RankResponse> RankerClient::Rank(
    const v1::RankRequest& request) {
  grpc::ClientContext context;
  SetDeadline(&context, options_.deadline);
  v1::RankResponse response;
  grpc::Status status = stub_->Rank(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response;
}

absl::StatusOr<v1::RankResponse> RankerClient::Rank(
    const ModelRef& model, const std::string& query_id,
    absl::Span<const v1::Document> documents, uint32_t top_k) {
  v1::RankRequest request;
  *request.mutable_model_spec() = model.ToProto();
  request.set_query_id(query_id);
  request.set_top_k(top_k);
  request.mutable_documents()->Add(documents.begin(), documents.end());
  return Rank(request);
}

absl::StatusOr<v1::RankResponse> RankerClient::RankDense(
    const ModelRef& model, const std::string& query_id,
    absl::Span<const float> rows, int32_t num_features, uint32_t top_k) {
  if (num_features <= 0 || rows.size() % num_features != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("dense rows hold ", rows.size(),
                     " values, not a multiple of ", num_features, " features"));
  }
  v1::RankRequest request;
  *request.mutable_model_spec() = model.ToProto();
  request.set_query_id(query_id);
  request.set_top_k(top_k);
  const size_t count = rows.size() / num_features;
  for (size_t i = 0; i < count; ++i) {
    v1::Document* document = request.add_documents();
    document->set_id(absl::StrCat(i));
    document->mutable_dense()->mutable_values()->Add(
        rows.begin() + i * num_features, rows.begin() + (i + 1) * num_features);
  }
  return Rank(request);
}

namespace {

// The spec of query `query`: a nonzero seed becomes seed + query.
void SetSampling(const v1::SamplingSpec* sampling, size_t query,
                 v1::RankRequest* request) {
  if (sampling == nullptr) return;
  *request->mutable_sampling() = *sampling;
  if (sampling->seed() != 0) {
    request->mutable_sampling()->set_seed(sampling->seed() + query);
  }
}

}  // namespace

absl::StatusOr<v1::RankResponse> RankerClient::RankQuery(
    const ModelRef& model, const Dataset& data, size_t query, uint32_t top_k,
    const v1::SamplingSpec* sampling) {
  if (query >= data.num_queries()) {
    return absl::OutOfRangeError(absl::StrCat(
        "query ", query, " is beyond the dataset's ", data.num_queries()));
  }
  v1::RankRequest request;
  *request.mutable_model_spec() = model.ToProto();
  request.set_top_k(top_k);
  SetSampling(sampling, query, &request);
  FillRankRequest(data, query, &request);
  return Rank(request);
}

absl::StatusOr<std::vector<absl::StatusOr<v1::RankResponse>>>
RankerClient::RankBatch(absl::Span<const v1::RankRequest> requests) {
  v1::RankBatchRequest request;
  request.mutable_requests()->Add(requests.begin(), requests.end());
  grpc::ClientContext context;
  SetDeadline(&context, options_.deadline);
  v1::RankBatchResponse response;
  grpc::Status status = stub_->RankBatch(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  if (response.results_size() != request.requests_size()) {
    return absl::InternalError(
        absl::StrCat("the server answered ", response.results_size(),
                     " results for ", request.requests_size(), " queries"));
  }
  std::vector<absl::StatusOr<v1::RankResponse>> results;
  results.reserve(response.results_size());
  for (v1::RankBatchResult& result : *response.mutable_results()) {
    if (result.status().code() == 0) {
      results.emplace_back(std::move(*result.mutable_response()));
    } else {
      results.emplace_back(
          absl::Status(static_cast<absl::StatusCode>(result.status().code()),
                       result.status().message()));
    }
  }
  return results;
}

absl::StatusOr<std::vector<absl::StatusOr<v1::RankResponse>>>
RankerClient::RankQueries(const ModelRef& model, const Dataset& data,
                          size_t begin, size_t end, uint32_t top_k,
                          const v1::SamplingSpec* sampling) {
  if (begin >= end || end > data.num_queries()) {
    return absl::OutOfRangeError(absl::StrCat(
        "queries [", begin, ", ", end,
        ") are not a non-empty range of the dataset's ", data.num_queries()));
  }
  std::vector<v1::RankRequest> requests(end - begin);
  for (size_t q = begin; q < end; ++q) {
    v1::RankRequest& request = requests[q - begin];
    *request.mutable_model_spec() = model.ToProto();
    request.set_top_k(top_k);
    SetSampling(sampling, q, &request);
    FillRankRequest(data, q, &request);
  }
  return RankBatch(requests);
}

absl::StatusOr<v1::ExplainResponse> RankerClient::Explain(
    const v1::ExplainRequest& request) {
  grpc::ClientContext context;
  SetDeadline(&context, options_.deadline);
  v1::ExplainResponse response;
  grpc::Status status = stub_->Explain(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response;
}

absl::StatusOr<v1::ExplainResponse> RankerClient::ExplainQuery(
    const ModelRef& model, const Dataset& data, size_t query, uint32_t top_k) {
  if (query >= data.num_queries()) {
    return absl::OutOfRangeError(absl::StrCat(
        "query ", query, " is beyond the dataset's ", data.num_queries()));
  }
  v1::ExplainRequest request;
  *request.mutable_model_spec() = model.ToProto();
  request.set_top_k(top_k);
  request.set_query_id(data.query_ids[query]);
  AppendQueryDocuments(data, query, request.mutable_documents());
  return Explain(request);
}

v1::EvaluateRequest RankerClient::EvaluateHeader(
    const ModelRef& model, const EvaluateOptions& options) const {
  v1::EvaluateRequest request;
  *request.mutable_model_spec() = model.ToProto();
  request.mutable_ndcg_at()->Add(options.ndcg_at.begin(),
                                 options.ndcg_at.end());
  request.set_per_query(options.per_query);
  switch (options.empty_query) {
    case EmptyQueryNdcg::kOne:
      break;  // the API's default, understood by every server version
    case EmptyQueryNdcg::kZero:
      request.set_empty_query_ndcg(v1::EMPTY_QUERY_NDCG_ZERO);
      break;
    case EmptyQueryNdcg::kSkip:
      request.set_skip_empty_queries(true);  // what older servers read
      request.set_empty_query_ndcg(v1::EMPTY_QUERY_NDCG_SKIP);
      break;
  }
  return request;
}

namespace {

// A server older than empty_query_ndcg ignores it and answers with NDCG = 1
// for empty queries; never pass that off as the 0 that was asked for.
absl::StatusOr<v1::EvaluateResponse> CheckConvention(
    const EvaluateOptions& options, v1::EvaluateResponse response) {
  if (options.empty_query == EmptyQueryNdcg::kZero &&
      response.empty_query_ndcg() != v1::EMPTY_QUERY_NDCG_ZERO) {
    return absl::FailedPreconditionError(
        "the server does not support empty_query_ndcg=zero (it predates it); "
        "use one or skip, or upgrade the server");
  }
  return response;
}

}  // namespace

absl::StatusOr<v1::EvaluateResponse> RankerClient::Evaluate(
    const ModelRef& model, const Dataset& data,
    const EvaluateOptions& options) {
  const size_t queries = data.num_queries();
  if (queries == 0) {
    return absl::InvalidArgumentError("the dataset to evaluate has no queries");
  }
  size_t total_bytes = 0;
  for (size_t q = 0; q < queries; ++q)
    total_bytes += EstimatedQueryBytes(data, q);

  grpc::ClientContext context;
  SetDeadline(&context, options_.evaluate_deadline);
  v1::EvaluateResponse response;
  v1::EvaluateRequest request = EvaluateHeader(model, options);

  if (queries <= static_cast<size_t>(options_.evaluate_unary_max_queries) &&
      total_bytes <= options_.evaluate_message_bytes) {
    for (size_t q = 0; q < queries; ++q) {
      FillLabelledQuery(data, q, request.add_queries());
    }
    grpc::Status status = stub_->Evaluate(&context, request, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return CheckConvention(options, std::move(response));
  }

  // Stream: the header rides on the first message only; each message holds
  // whole queries and stays near evaluate_message_bytes.
  std::unique_ptr<grpc::ClientWriter<v1::EvaluateRequest>> writer =
      stub_->EvaluateStream(&context, &response);
  size_t message_bytes = 0;
  bool stream_open = true;
  for (size_t q = 0; q < queries && stream_open; ++q) {
    const size_t bytes = EstimatedQueryBytes(data, q);
    if (request.queries_size() > 0 &&
        message_bytes + bytes > options_.evaluate_message_bytes) {
      stream_open = writer->Write(request);
      request.Clear();
      message_bytes = 0;
    }
    FillLabelledQuery(data, q, request.add_queries());
    message_bytes += bytes;
  }
  if (stream_open && request.queries_size() > 0) writer->Write(request);
  writer->WritesDone();
  grpc::Status status = writer->Finish();
  if (!status.ok()) return FromGrpcStatus(status);
  return CheckConvention(options, std::move(response));
}

absl::StatusOr<v1::ModelStatus> RankerClient::GetModelStatus(
    const std::string& name) {
  absl::StatusOr<v1::GetModelStatusResponse> response =
      GetFullModelStatus(name);
  if (!response.ok()) return response.status();
  return response->status();
}

absl::StatusOr<v1::GetModelStatusResponse> RankerClient::GetFullModelStatus(
    const std::string& name) {
  grpc::ClientContext context;
  SetDeadline(&context, options_.deadline);
  v1::GetModelStatusRequest request;
  request.set_name(name);
  v1::GetModelStatusResponse response;
  grpc::Status status = stub_->GetModelStatus(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response;
}

absl::StatusOr<std::vector<v1::ModelStatus>> RankerClient::ListModels() {
  grpc::ClientContext context;
  SetDeadline(&context, options_.deadline);
  v1::ListModelsResponse response;
  grpc::Status status =
      stub_->ListModels(&context, v1::ListModelsRequest(), &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return std::vector<v1::ModelStatus>(response.models().begin(),
                                      response.models().end());
}

absl::StatusOr<v1::ReloadModelsResponse> RankerClient::ReloadModels() {
  grpc::ClientContext context;
  SetDeadline(&context, options_.deadline);
  v1::ReloadModelsResponse response;
  grpc::Status status =
      stub_->ReloadModels(&context, v1::ReloadModelsRequest(), &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response;
}

absl::StatusOr<v1::VersionStatus> ResolveVersion(const v1::ModelStatus& status,
                                                 const ModelRef& model) {
  std::vector<int64_t> known;
  for (const v1::VersionStatus& version : status.versions()) {
    known.push_back(version.version());
  }
  const std::string listing =
      known.empty() ? "none" : absl::StrJoin(known, ", ");
  if (model.version > 0) {
    for (const v1::VersionStatus& version : status.versions()) {
      if (version.version() == model.version) return version;
    }
    return absl::NotFoundError(absl::StrCat("model ", status.name(),
                                            " has no version ", model.version,
                                            " (versions: ", listing, ")"));
  }
  if (!model.label.empty()) {
    for (const v1::VersionStatus& version : status.versions()) {
      for (const std::string& label : version.labels()) {
        if (label == model.label) return version;
      }
    }
    return absl::NotFoundError(absl::StrCat("model ", status.name(),
                                            " has no version labelled '",
                                            model.label, "'"));
  }
  for (const v1::VersionStatus& version : status.versions()) {
    if (version.version() == status.default_version()) return version;
  }
  return absl::UnavailableError(
      absl::StrCat("model ", status.name(),
                   " has no version ready to serve (versions: ", listing, ")"));
}

}  // namespace plrank
