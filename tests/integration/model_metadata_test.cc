// GetModelMetadata: the public description of a served model (feature count
// and names, outputs, score transform, versions and labels), resolved like
// Rank, with Rank's errors.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "core/model/model_io.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "plrank/v1/ranker.grpc.pb.h"
#include "tests/testing/client_context.h"
#include "tests/testing/server_process.h"
#include "tests/testing/test_models.h"

namespace plrank {
namespace {

using ::plrank::testing::ClientContextFor;
using ::plrank::testing::ServerProcess;
using ::plrank::testing::TempDir;
using ::plrank::testing::TestEnsemble;
using ::plrank::testing::WriteTestModel;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

grpc::Status Metadata(ServerProcess& server, const std::string& name,
                      int64_t version, const std::string& label,
                      v1::GetModelMetadataResponse* response) {
  v1::GetModelMetadataRequest request;
  request.mutable_model_spec()->set_name(name);
  request.mutable_model_spec()->set_version(version);
  request.mutable_model_spec()->set_version_label(label);
  return server.stub().GetModelMetadata(ClientContextFor(10, false).get(), request, response);
}

TEST(ModelMetadataTest, DescribesTheResolvedVersionAndWhatCanBePinned) {
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  Ensemble named = TestEnsemble(2);
  named.feature_names = {"bm25", "pagerank", "clicks", "age"};
  const std::filesystem::path dir =
      std::filesystem::path(base.path()) / "web" / "2";
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(WriteModelFile(named, (dir / "model.pb").string()).ok());
  const std::string config = base.File("models.config");
  std::ofstream(config) << R"pb(
    models {
      name: "web"
      version_policy { all {} }
      version_labels { key: "stable" value: 1 }
      version_labels { key: "canary" value: 2 }
      version_labels { key: "future" value: 7 }
    })pb";
  ServerProcess server({"--model_base_path=" + base.path(),
                        "--model_config_file=" + config,
                        "--poll_interval_seconds=0"});
  ASSERT_TRUE(server.ok()) << server.stderr_text();
  v1::ReloadModelsResponse reload;
  ASSERT_TRUE(server.stub()
                  .ReloadModels(ClientContextFor(10, false).get(), v1::ReloadModelsRequest(),
                                &reload)
                  .ok());

  v1::GetModelMetadataResponse latest;
  ASSERT_TRUE(Metadata(server, "web", 0, "", &latest).ok());
  EXPECT_EQ(latest.model_name(), "web");
  EXPECT_EQ(latest.model_version(), 2);
  EXPECT_EQ(latest.num_features(), 4u);
  EXPECT_THAT(latest.feature_names(),
              ElementsAre("bm25", "pagerank", "clicks", "age"));
  EXPECT_EQ(latest.num_outputs(), 1u);
  EXPECT_EQ(latest.score_transform(), "identity");
  EXPECT_EQ(latest.objective(), "plrank");
  EXPECT_THAT(latest.available_versions(), ElementsAre(1, 2));
  EXPECT_EQ(latest.default_version(), 2);
  // Only labels whose version can serve.
  EXPECT_THAT(latest.labels(),
              UnorderedElementsAre(Pair("stable", 1), Pair("canary", 2)));

  v1::GetModelMetadataResponse stable;
  ASSERT_TRUE(Metadata(server, "web", 0, "stable", &stable).ok());
  EXPECT_EQ(stable.model_version(), 1);
  EXPECT_TRUE(stable.feature_names().empty());
  v1::GetModelMetadataResponse pinned;
  ASSERT_TRUE(Metadata(server, "web", 1, "", &pinned).ok());
  EXPECT_EQ(pinned.model_version(), 1);

  // Rank's errors, naming the request's model and no file.
  v1::GetModelMetadataResponse error;
  grpc::Status unknown = Metadata(server, "nope", 0, "", &error);
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(unknown.error_message(), HasSubstr("nope"));
  EXPECT_EQ(Metadata(server, "web", 5, "", &error).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Metadata(server, "web", 0, "beta", &error).error_code(),
            grpc::StatusCode::NOT_FOUND);
  grpc::Status empty = Metadata(server, "", 0, "", &error);
  EXPECT_EQ(empty.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(empty.error_message(), HasSubstr("model_spec.name"));
  EXPECT_THAT(unknown.error_message(), ::testing::Not(HasSubstr(base.path())));

  // Counted like every RPC.
  const std::string metrics =
      ::plrank::testing::HttpGet(server.metrics_port(), "/metrics");
  EXPECT_THAT(metrics, HasSubstr("method=\"GetModelMetadata\""));
}

}  // namespace
}  // namespace plrank
