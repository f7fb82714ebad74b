#ifndef PLRANK_SERVER_REQUEST_RECORD_H_
#define PLRANK_SERVER_REQUEST_RECORD_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "server/lifecycle/servable_version.h"
#include "server/server_metrics.h"

namespace plrank::server {

// The one translation of a status into what a client receives: the code,
// and the message cut to kMaxErrorMessageBytes (echoed client strings are
// capped where they are quoted; this bounds the whole trailer whatever a
// message holds).
grpc::Status ToGrpc(const absl::Status& status);

// CANCELLED / DEADLINE_EXCEEDED once the client gave up, so that a large
// request stops scoring for nobody; OK otherwise.
absl::Status CheckClient(const grpc::ServerContext& context);

// Times one request of any front end (Ranker RPCs, the Open Inference
// Protocol over gRPC and HTTP) and records it on destruction: the
// protocol series, and the request series of its model.
class RequestRecord {
 public:
  // `protocol` is "grpc", "http", ... (CallProtocol for Ranker RPCs);
  // `method` a string literal. A server-wide request (health, server
  // metadata: `server_wide`) records the protocol series only.
  RequestRecord(ServerMetrics* metrics, const char* method,
                absl::string_view protocol, bool server_wide = false)
      : metrics_(metrics),
        method_(method),
        protocol_(protocol),
        server_wide_(server_wide),
        start_(absl::Now()) {}
  ~RequestRecord();
  RequestRecord(const RequestRecord&) = delete;
  RequestRecord& operator=(const RequestRecord&) = delete;

  // The model label: the requested name once it is known to exist, so
  // arbitrary names from callers do not create label values.
  void SetModel(const std::string& name, bool known) {
    model_ = known ? name : "_unknown";
  }
  // Holds the version until the request is recorded: a retired version is
  // released (and its metric series dropped) only after its last record.
  void SetVersion(std::shared_ptr<const ServableVersion> version) {
    model_ = version->model();
    version_ = version->version_string();
    held_ = std::move(version);
  }
  void SetDocuments(uint64_t documents) { documents_ = documents; }
  // Records `status` as the outcome and returns it.
  absl::Status Done(absl::Status status) {
    code_ = status.code();
    return status;
  }
  grpc::Status Finish(const absl::Status& status) {
    code_ = status.code();
    return ToGrpc(status);
  }

 private:
  ServerMetrics* metrics_;
  const char* method_;
  std::string protocol_;
  bool server_wide_;
  absl::Time start_;
  std::string model_;
  std::string version_;
  uint64_t documents_ = 0;
  absl::StatusCode code_ = absl::StatusCode::kUnknown;
  std::shared_ptr<const ServableVersion> held_;
};

}  // namespace plrank::server

#endif  // PLRANK_SERVER_REQUEST_RECORD_H_
