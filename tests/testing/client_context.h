#ifndef PLRANK_TESTS_TESTING_CLIENT_CONTEXT_H_
#define PLRANK_TESTS_TESTING_CLIENT_CONTEXT_H_

#include <chrono>
#include <memory>

#include "grpcpp/grpcpp.h"

namespace plrank::testing {

// A context for one call to a test's server: its deadline `seconds` from
// now bounds the call (a test never hangs on a server that stopped
// answering). With wait_for_ready the call waits for the channel to
// connect (a server still starting) instead of failing at once.
inline std::unique_ptr<grpc::ClientContext> ClientContextFor(
    int seconds, bool wait_for_ready) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::seconds(seconds));
  if (wait_for_ready) context->set_wait_for_ready(true);
  return context;
}

}  // namespace plrank::testing

#endif  // PLRANK_TESTS_TESTING_CLIENT_CONTEXT_H_
