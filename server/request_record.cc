#include "server/request_record.h"

#include <chrono>
#include <string>

#include "server/lifecycle/echoed_text.h"

namespace plrank::server {

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(
      static_cast<grpc::StatusCode>(status.code()),
      TruncateForMessage(status.message(), kMaxErrorMessageBytes));
}

absl::Status CheckClient(const grpc::ServerContext& context) {
  if (context.deadline() <= std::chrono::system_clock::now()) {
    return absl::DeadlineExceededError(
        "the client's deadline passed before scoring finished");
  }
  if (context.IsCancelled()) {
    return absl::CancelledError("the client cancelled the request");
  }
  return absl::OkStatus();
}

RequestRecord::~RequestRecord() {
  if (metrics_ == nullptr) return;
  const std::string code = absl::StatusCodeToString(code_);
  metrics_->RecordProtocol(protocol_, method_, code);
  if (server_wide_) return;
  metrics_->RecordRequest(method_, model_, version_, code,
                          absl::ToDoubleSeconds(absl::Now() - start_),
                          documents_);
}

}  // namespace plrank::server
