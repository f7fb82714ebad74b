#include "server/ranker_service.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "server/evaluation_accumulator.h"
#include "server/explanation.h"
#include "server/http/gateway_protocol.h"
#include "server/model_metadata.h"
#include "server/ranking.h"
#include "server/request_record.h"
#include "server/wire_status.h"
#include "server/lifecycle/echoed_text.h"

namespace plrank::server {
namespace {

// Every Ranker RPC is recorded under its call's protocol (gRPC, or the
// HTTP port's gateway).
class RpcRecord : public RequestRecord {
 public:
  RpcRecord(ServerMetrics* metrics, const char* method,
            const grpc::ServerContext& context)
      : RequestRecord(metrics, method, CallProtocol(context)) {}
};

absl::StatusOr<std::shared_ptr<const ServableVersion>> ResolveFor(
    const ServingSnapshot& snapshot, const v1::ModelSpec& spec,
    RequestRecord* record) {
  record->SetModel(spec.name(), snapshot.models.count(spec.name()) > 0);
  absl::StatusOr<VersionSelector> selector = SelectorFromWire(spec);
  if (!selector.ok()) return selector.status();
  auto version = snapshot.Resolve(*selector);
  if (version.ok()) record->SetVersion(*version);
  return version;
}

}  // namespace

RankerService::RankerService(VersionManager* manager, ScanScheduler* scanner,
                             ServerMetrics* metrics, RequestLimits limits,
                             AdminAccessPolicy admin, MemoryReleaser* releaser,
                             ShadowScorer* shadow,
                             ImpressionLogger* impressions)
    : manager_(manager),
      scanner_(scanner),
      metrics_(metrics),
      limits_(limits),
      admin_(std::move(admin)),
      releaser_(releaser),
      shadow_(shadow),
      impressions_(impressions) {}

absl::Status RankerService::RankAndLog(const ServableVersion& version,
                                       const v1::RankRequest& request,
                                       grpc::ServerContext* context,
                                       v1::RankResponse* response) {
  const bool log = impressions_ != nullptr && request.has_sampling();
  thread_local std::vector<double> scores;
  absl::Status status = RankDocuments(
      version, request, limits_, [context] { return CheckClient(*context); },
      response, log ? &scores : nullptr);
  if (!status.ok() || !log) return status;
  if (response->request_id().empty()) {
    response->set_request_id(ImpressionLogger::NewRequestId());
  }
  impressions_->Offer(request, *response, scores);
  return status;
}

namespace {

// Feature values a request carried (documents x the model's width): what
// its message and buffers cost.
void NoteSize(MemoryReleaser* releaser, const ServableVersion& version,
              uint64_t documents) {
  if (releaser == nullptr) return;
  releaser->NoteRequest(documents * static_cast<uint64_t>(std::max(
                                        version.scorer().num_features(), 1)));
}

}  // namespace

grpc::Status RankerService::Rank(grpc::ServerContext* context,
                                 const v1::RankRequest* request,
                                 v1::RankResponse* response) {
  RpcRecord record(metrics_, "Rank", *context);
  record.SetDocuments(static_cast<uint64_t>(request->documents_size()));
  const std::shared_ptr<const ServingSnapshot> snapshot = manager_->snapshot();
  auto version = ResolveFor(*snapshot, request->model_spec(), &record);
  if (!version.ok()) return record.Finish(version.status());
  const absl::Time start = absl::Now();
  absl::Status status = RankAndLog(**version, *request, context, response);
  NoteSize(releaser_, **version,
           static_cast<uint64_t>(request->documents_size()));
  if (status.ok() && metrics_ != nullptr) {
    metrics_->RecordScoring((*version)->model(), (*version)->version_string(),
                            absl::ToDoubleSeconds(absl::Now() - start));
  }
  if (status.ok()) OfferShadow(*snapshot, *version, *request, *response);
  return record.Finish(status);
}

void RankerService::OfferShadow(
    const ServingSnapshot& snapshot,
    const std::shared_ptr<const ServableVersion>& version,
    const v1::RankRequest& request, const v1::RankResponse& response) {
  if (shadow_ == nullptr) return;
  auto model = snapshot.models.find(version->model());
  if (model == snapshot.models.end() || !model->second.has_shadow) return;
  shadow_->Offer(model->second, version, request, response);
}

namespace {

// The batch-wide bounds: non-empty, at most max_batch_queries queries and
// max_batch_documents documents.
absl::Status CheckBatch(const v1::RankBatchRequest& request,
                        const RequestLimits& limits, uint64_t documents) {
  if (request.requests_size() == 0) {
    return absl::InvalidArgumentError("the batch has no queries");
  }
  return CheckBatchCounts(static_cast<uint64_t>(request.requests_size()),
                          documents, limits, "RankBatch", "documents");
}

// The model label of a whole batch: its model when every query names the
// same one, else "_mixed".
void SetBatchModel(const ServingSnapshot& snapshot,
                   const v1::RankBatchRequest& request, RequestRecord* record) {
  if (request.requests_size() == 0) return;
  const std::string& name = request.requests(0).model_spec().name();
  for (const v1::RankRequest& query : request.requests()) {
    if (query.model_spec().name() != name) {
      record->SetModel("_mixed", true);
      return;
    }
  }
  record->SetModel(name, snapshot.models.count(name) > 0);
}

}  // namespace

grpc::Status RankerService::RankBatch(grpc::ServerContext* context,
                                      const v1::RankBatchRequest* request,
                                      v1::RankBatchResponse* response) {
  RpcRecord record(metrics_, "RankBatch", *context);
  uint64_t documents = 0;
  for (const v1::RankRequest& query : request->requests()) {
    documents += static_cast<uint64_t>(query.documents_size());
  }
  record.SetDocuments(documents);
  // One snapshot for the whole batch: its queries see the same versions.
  const std::shared_ptr<const ServingSnapshot> snapshot = manager_->snapshot();
  SetBatchModel(*snapshot, *request, &record);
  if (absl::Status status = CheckBatch(*request, limits_, documents);
      !status.ok()) {
    return record.Finish(status);
  }
  response->mutable_results()->Reserve(request->requests_size());
  for (const v1::RankRequest& query : request->requests()) {
    // A client that gave up gets no partial batch.
    if (absl::Status status = CheckClient(*context); !status.ok()) {
      response->Clear();
      return record.Finish(status);
    }
    v1::RankBatchResult* result = response->add_results();
    RpcRecord query_record(metrics_, "Rank", *context);
    query_record.SetDocuments(static_cast<uint64_t>(query.documents_size()));
    auto version = ResolveFor(*snapshot, query.model_spec(), &query_record);
    absl::Status status = version.status();
    if (version.ok()) {
      const absl::Time start = absl::Now();
      status = RankAndLog(**version, query, context,
                          result->mutable_response());
      NoteSize(releaser_, **version,
               static_cast<uint64_t>(query.documents_size()));
      if (status.ok() && metrics_ != nullptr) {
        metrics_->RecordScoring((*version)->model(),
                                (*version)->version_string(),
                                absl::ToDoubleSeconds(absl::Now() - start));
      }
      if (status.ok()) {
        OfferShadow(*snapshot, *version, query, result->response());
      }
    }
    if (!status.ok()) result->clear_response();
    result->mutable_status()->set_code(static_cast<int32_t>(status.code()));
    result->mutable_status()->set_message(std::string(status.message()));
    query_record.Finish(status);
  }
  if (absl::Status status = CheckClient(*context); !status.ok()) {
    response->Clear();
    return record.Finish(status);
  }
  return record.Finish(absl::OkStatus());
}

grpc::Status RankerService::Explain(grpc::ServerContext* context,
                                    const v1::ExplainRequest* request,
                                    v1::ExplainResponse* response) {
  RpcRecord record(metrics_, "Explain", *context);
  record.SetDocuments(static_cast<uint64_t>(request->documents_size()));
  auto version =
      ResolveFor(*manager_->snapshot(), request->model_spec(), &record);
  if (!version.ok()) return record.Finish(version.status());
  const absl::Time start = absl::Now();
  absl::Status status = ExplainDocuments(
      **version, *request, limits_, [context] { return CheckClient(*context); },
      response);
  NoteSize(releaser_, **version,
           static_cast<uint64_t>(request->documents_size()));
  if (status.ok() && metrics_ != nullptr) {
    metrics_->RecordExplain((*version)->model(),
                            absl::ToDoubleSeconds(absl::Now() - start));
  }
  return record.Finish(status);
}

grpc::Status RankerService::Evaluate(grpc::ServerContext* context,
                                     const v1::EvaluateRequest* request,
                                     v1::EvaluateResponse* response) {
  RpcRecord record(metrics_, "Evaluate", *context);
  auto version = ResolveFor(*manager_->snapshot(), request->model_spec(),
                            &record);
  if (!version.ok()) return record.Finish(version.status());
  auto accumulator = EvaluationAccumulator::Create(*request, limits_);
  if (!accumulator.ok()) return record.Finish(accumulator.status());
  const absl::Time start = absl::Now();
  absl::Status status = accumulator->AddQueries(
      **version, *request, [context] { return CheckClient(*context); });
  record.SetDocuments(accumulator->num_documents());
  NoteSize(releaser_, **version, accumulator->num_documents());
  if (status.ok()) status = accumulator->Finish(**version, response);
  if (status.ok() && metrics_ != nullptr) {
    metrics_->RecordScoring((*version)->model(), (*version)->version_string(),
                            absl::ToDoubleSeconds(absl::Now() - start));
  }
  return record.Finish(status);
}

grpc::Status RankerService::EvaluateStream(
    grpc::ServerContext* context,
    grpc::ServerReader<v1::EvaluateRequest>* reader,
    v1::EvaluateResponse* response) {
  RpcRecord record(metrics_, "EvaluateStream", *context);
  // A stream holds this thread while it waits for the client: admitted
  // only within the guard's bound, and cancelled when idle or too long.
  std::unique_ptr<StreamGuard::Lease> lease;
  if (stream_guard_ != nullptr) {
    auto admitted = stream_guard_->Admit(context);
    if (!admitted.ok()) return record.Finish(admitted.status());
    lease = *std::move(admitted);
  }
  const auto read = [&](v1::EvaluateRequest* next) {
    if (!reader->Read(next)) return false;
    if (lease != nullptr) lease->Touch();
    return true;
  };
  v1::EvaluateRequest message;
  if (!read(&message)) {
    if (lease != nullptr && !lease->TimedOut().ok()) {
      return record.Finish(lease->TimedOut());
    }
    return record.Finish(absl::InvalidArgumentError(
        "the stream ended before its first message"));
  }
  // The model spec and options of the first message hold for the whole
  // stream, and so does the version it resolves to.
  auto version = ResolveFor(*manager_->snapshot(), message.model_spec(),
                            &record);
  if (!version.ok()) return record.Finish(version.status());
  auto accumulator = EvaluationAccumulator::Create(message, limits_);
  if (!accumulator.ok()) return record.Finish(accumulator.status());
  double scoring_seconds = 0.0;
  absl::Status status = absl::OkStatus();
  do {
    const absl::Time start = absl::Now();
    status = accumulator->AddQueries(
        **version, message, [context] { return CheckClient(*context); });
    scoring_seconds += absl::ToDoubleSeconds(absl::Now() - start);
  } while (status.ok() && read(&message));
  if (status.ok() && lease != nullptr) status = lease->TimedOut();
  if (status.ok()) status = CheckClient(*context);
  record.SetDocuments(accumulator->num_documents());
  NoteSize(releaser_, **version, accumulator->num_documents());
  if (status.ok()) status = accumulator->Finish(**version, response);
  if (status.ok() && metrics_ != nullptr) {
    metrics_->RecordScoring((*version)->model(), (*version)->version_string(),
                            scoring_seconds);
  }
  return record.Finish(status);
}

grpc::Status RankerService::GetModelMetadata(
    grpc::ServerContext* context, const v1::GetModelMetadataRequest* request,
    v1::GetModelMetadataResponse* response) {
  RpcRecord record(metrics_, "GetModelMetadata", *context);
  const std::shared_ptr<const ServingSnapshot> snapshot = manager_->snapshot();
  auto version = ResolveFor(*snapshot, request->model_spec(), &record);
  if (!version.ok()) return record.Finish(version.status());
  *response =
      DescribeModel(snapshot->models.at((*version)->model()), **version);
  return record.Finish(absl::OkStatus());
}

grpc::Status RankerService::GetModelStatus(
    grpc::ServerContext* context, const v1::GetModelStatusRequest* request,
    v1::GetModelStatusResponse* response) {
  RpcRecord record(metrics_, "GetModelStatus", *context);
  if (absl::Status access =
          CheckAdminAccess(admin_, *context, "GetModelStatus");
      !access.ok()) {
    return record.Finish(access);
  }
  std::shared_ptr<const ServingSnapshot> snapshot = manager_->snapshot();
  auto it = snapshot->models.find(request->name());
  record.SetModel(request->name(), it != snapshot->models.end());
  if (it == snapshot->models.end()) {
    return record.Finish(absl::NotFoundError(
        absl::StrCat("unknown model '", EchoedText(request->name()), "'")));
  }
  *response->mutable_status() = ToWire(it->second.status);
  if (shadow_ != nullptr && it->second.has_shadow) {
    *response->mutable_shadow() = shadow_->Status(it->second);
  }
  return record.Finish(absl::OkStatus());
}

grpc::Status RankerService::ListModels(grpc::ServerContext* context,
                                       const v1::ListModelsRequest* request,
                                       v1::ListModelsResponse* response) {
  RpcRecord record(metrics_, "ListModels", *context);
  if (absl::Status access = CheckAdminAccess(admin_, *context, "ListModels");
      !access.ok()) {
    return record.Finish(access);
  }
  std::shared_ptr<const ServingSnapshot> snapshot = manager_->snapshot();
  for (const auto& [name, model] : snapshot->models) {
    *response->add_models() = ToWire(model.status);
  }
  return record.Finish(absl::OkStatus());
}

grpc::Status RankerService::ReloadModels(
    grpc::ServerContext* context, const v1::ReloadModelsRequest* request,
    v1::ReloadModelsResponse* response) {
  RpcRecord record(metrics_, "ReloadModels", *context);
  if (absl::Status access = CheckAdminAccess(admin_, *context, "ReloadModels");
      !access.ok()) {
    return record.Finish(access);
  }
  // The scan (reading, parsing and warming up model files) runs on the
  // scanning thread; this RPC thread only waits for its outcome.
  absl::StatusOr<ScanSummary> scanned =
      scanner_->ScanAndWait(absl::FromChrono(context->deadline()),
                            [context] { return context->IsCancelled(); });
  if (!scanned.ok()) return record.Finish(scanned.status());
  const ScanSummary& summary = *scanned;
  if (!summary.status.ok()) {
    // The repository (or config) could not be read; nothing changed.
    return record.Finish(absl::UnavailableError(absl::StrCat(
        "model repository scan failed, serving state unchanged: ",
        summary.status.message())));
  }
  response->set_loaded(summary.loaded);
  response->set_failed(summary.failed);
  response->set_unloaded(summary.unloaded);
  // Hold the snapshot for the loop: a range-for over a temporary's member
  // does not keep the temporary alive, and a concurrent scan could free it.
  const std::shared_ptr<const ServingSnapshot> snapshot = manager_->snapshot();
  for (const auto& [name, model] : snapshot->models) {
    *response->add_models() = ToWire(model.status);
  }
  return record.Finish(absl::OkStatus());
}

}  // namespace plrank::server
