// ValidateServerOptions: the flag values plrank-server refuses before it
// binds anything (server/ranking_server.h).
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/ranking_server.h"

namespace plrank::server {
namespace {

using ::testing::HasSubstr;

TEST(ServerOptionsTest, DefaultsAndDocumentedSpecialValuesPass) {
  EXPECT_TRUE(ValidateServerOptions(ServerOptions{}).ok());
  ServerOptions options;
  options.port = 0;                    // any free port
  options.metrics_port = -1;           // no /metrics
  options.poll_interval_seconds = -1;  // scan at start and on reload only
  options.lame_duck_seconds = 600;
  options.max_message_bytes = 1024;
  options.num_threads = 1;
  EXPECT_TRUE(ValidateServerOptions(options).ok());
  options.scoring_kernel = "lockstep_walks";  // every kernel name
  EXPECT_TRUE(ValidateServerOptions(options).ok());
  options.scoring_kernel = "";  // as auto
  EXPECT_TRUE(ValidateServerOptions(options).ok());
}

TEST(ServerOptionsTest, RefusesValuesThatWouldMisbehaveAndNamesTheFlag) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    std::function<void(ServerOptions&)> set;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](ServerOptions& o) { o.port = 70000; },
       "--port must be in 0..65535 (0 = any free port), got 70000"},
      {[](ServerOptions& o) { o.port = -1; }, "--port must be in 0..65535"},
      {[](ServerOptions& o) { o.metrics_port = 65536; },
       "--metrics_port must be in 0..65535 (0 = any free port, negative = "
       "off), got 65536"},
      {[&](ServerOptions& o) { o.poll_interval_seconds = nan; },
       "--poll_interval_seconds must be a finite number of seconds"},
      {[&](ServerOptions& o) { o.poll_interval_seconds = inf; },
       "--poll_interval_seconds must be a finite number"},
      {[&](ServerOptions& o) { o.drain_seconds = nan; },
       "--drain_seconds must be in [0, 86400] seconds, got nan"},
      {[](ServerOptions& o) { o.drain_seconds = -1; }, "--drain_seconds"},
      {[](ServerOptions& o) { o.lame_duck_seconds = 1e300; },
       "--lame_duck_seconds must be in [0, 86400] seconds"},
      {[](ServerOptions& o) { o.limits.max_documents_per_request = 0; },
       "--max_documents_per_request must be at least 1"},
      {[](ServerOptions& o) { o.limits.max_queries_per_request = 0; },
       "--max_queries_per_request must be at least 1"},
      {[](ServerOptions& o) { o.limits.max_evaluate_documents = 0; },
       "--max_evaluate_documents must be at least 1"},
      {[](ServerOptions& o) { o.limits.max_explain_cost = 0; },
       "--max_explain_cost must be at least 1"},
      {[](ServerOptions& o) { o.limits.max_batch_queries = 0; },
       "--max_batch_queries must be at least 1"},
      {[](ServerOptions& o) { o.limits.max_batch_documents = 0; },
       "--max_batch_documents must be at least 1"},
      {[](ServerOptions& o) { o.shadow_queue_capacity = 0; },
       "--shadow_queue_capacity must be at least 1"},
      {[](ServerOptions& o) { o.max_message_bytes = -5; },
       "--max_message_bytes must be at least 1024, got -5"},
      {[](ServerOptions& o) { o.max_message_bytes = 0; },
       "--max_message_bytes must be at least 1024"},
      {[](ServerOptions& o) { o.num_threads = -3; },
       "--num_threads must be >= 0 (0 = gRPC's default), got -3"},
      {[](ServerOptions& o) { o.scoring_kernel = "quickscorer"; },
       "--scoring_kernel: unknown kernel 'quickscorer' (known: auto, "
       "rapid_avx512, dense_avx512_vbmi, quick_avx512, quick_avx2, "
       "chained_walks, lane_chains, lockstep_walks)"},
  };
  for (const Case& c : cases) {
    ServerOptions options;
    c.set(options);
    const absl::Status status = ValidateServerOptions(options);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(status.message(), HasSubstr(c.message));
  }
}

}  // namespace
}  // namespace plrank::server
