// plrank-echo-server: the Ranker service with no model behind it. Rank
// returns the request's documents unscored (score 0) in request order; every
// other method is UNIMPLEMENTED. Serving it over the same gRPC stack as
// plrank-server gives the benchmark the transport's own floor: whatever
// plrank-server costs above this is parsing, validation and scoring.
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "common/program.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "plrank/v1/ranker.grpc.pb.h"

ABSL_FLAG(int32_t, port, 0, "Port on 127.0.0.1 (0 = pick a free one).");
ABSL_FLAG(std::string, host, "127.0.0.1", "Address to bind.");
ABSL_FLAG(int32_t, max_message_bytes, 64 << 20, "Largest request accepted.");

namespace {

class EchoRanker final : public plrank::v1::Ranker::Service {
 public:
  grpc::Status Rank(grpc::ServerContext* context,
                    const plrank::v1::RankRequest* request,
                    plrank::v1::RankResponse* response) override {
    response->set_model_name(request->model_spec().name());
    response->set_model_version(request->model_spec().version());
    response->set_query_id(request->query_id());
    const int count = request->documents_size();
    const int returned = request->top_k() == 0
                             ? count
                             : std::min<int>(count, static_cast<int>(request->top_k()));
    response->mutable_documents()->Reserve(returned);
    for (int i = 0; i < returned; ++i) {
      plrank::v1::ScoredDocument* document = response->add_documents();
      document->set_id(request->documents(i).id());
      document->set_score(0.0);
      document->set_rank(static_cast<uint32_t>(i + 1));
      document->set_request_index(static_cast<uint32_t>(i));
    }
    return grpc::Status::OK;
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> positional = plrank::ParseProgramFlags(
      argc, argv,
      "Ranker service without a model (transport floor for benchmarks).\n"
      "  plrank-echo-server [--port=0]");
  if (positional.size() > 1) {
    std::fprintf(stderr, "plrank-echo-server: error: unexpected argument %s\n",
                 positional[1]);
    return 2;
  }
  // Block the stop signals in every thread; one thread waits for them and
  // shuts the server down outside of signal-handler context.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  EchoRanker service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(
      absl::StrCat(absl::GetFlag(FLAGS_host), ":", absl::GetFlag(FLAGS_port)),
      grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(absl::GetFlag(FLAGS_max_message_bytes));
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    std::fprintf(stderr, "plrank-echo-server: error: cannot listen on %s:%d\n",
                 absl::GetFlag(FLAGS_host).c_str(), absl::GetFlag(FLAGS_port));
    return 1;
  }
  std::printf("listening on %s:%d\n", absl::GetFlag(FLAGS_host).c_str(), port);
  std::fflush(stdout);

  std::thread stopper([&server, &stop_signals] {
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    server->Shutdown();
  });
  server->Wait();
  stopper.join();
  return 0;
}
