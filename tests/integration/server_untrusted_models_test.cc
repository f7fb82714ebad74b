// Model files are untrusted input to the real plrank-server: declared sizes
// beyond what the payload holds, or models too large for the process's
// memory limit, end as FAILED versions with a message; the server never
// aborts and keeps serving its good version.

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "plrank/v1/ranker.grpc.pb.h"
#include "tests/testing/client_context.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/test_models.h"

namespace plrank {
namespace {

using ::plrank::testing::ClientContextFor;
using ::plrank::testing::ModelBytesDeclaringFeatures;
using ::plrank::testing::ServerProcess;
using ::plrank::testing::TempDir;
using ::plrank::testing::TestEnsemble;
using ::plrank::testing::TestModelScore;
using ::plrank::testing::WriteRawModelFile;
using ::plrank::testing::WriteTestModel;
using ::testing::HasSubstr;

std::map<int64_t, v1::VersionStatus> Reload(ServerProcess& server) {
  v1::ReloadModelsResponse reload;
  grpc::Status status = server.stub().ReloadModels(
      ClientContextFor(60, false).get(), v1::ReloadModelsRequest(), &reload);
  std::map<int64_t, v1::VersionStatus> versions;
  if (!status.ok() || reload.models_size() != 1) return versions;
  for (const auto& v : reload.models(0).versions()) versions[v.version()] = v;
  return versions;
}

// Sparse documents (x0 = 1, x1 = 0.25) pinned to `version`.
v1::RankRequest SparseRequest(int64_t version, int docs) {
  v1::RankRequest request;
  request.mutable_model_spec()->set_name("web");
  request.mutable_model_spec()->set_version(version);
  for (int i = 0; i < docs; ++i) {
    auto* sparse = request.add_documents()->mutable_sparse();
    sparse->add_indices(0);
    sparse->add_values(1.0f);
    sparse->add_indices(1);
    sparse->add_values(0.25f);
  }
  return request;
}

TEST(ServerUntrustedModelsTest, HugeDeclaredSizesFailOrLoadWithoutCrashing) {
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  ServerProcess server({"--model_base_path=" + base.path(),
                        "--poll_interval_seconds=0"});
  ASSERT_TRUE(server.ok()) << server.stderr_text();
  ASSERT_EQ(Reload(server)[1].state(), v1::VERSION_STATE_AVAILABLE);
  // From here on the server may allocate at most 256 MiB more (`ulimit -v`
  // style, relative to its size now).
  ASSERT_TRUE(server.LimitAddressSpace(int64_t{256} << 20));

  // Version 2: every declared feature backed by a linear weight (a valid
  // model of 128 MiB of weights): loading needs several copies of it, more
  // than the limit allows.
  Ensemble linear = TestEnsemble(2);
  linear.num_features = kMaxModelFeatures;
  linear.linear_weights.assign(kMaxModelFeatures, 0.0);
  {
    const std::string path = WriteTestModel(base.path(), "web", 2);
    ASSERT_TRUE(WriteModelFile(linear, path).ok());
  }
  // Version 3: the largest width a model may declare, but its trees read 2
  // features. Warm-up and requests must be sized by those, not by 2^24
  // (129 all-zero rows of 2^24 floats would be 8.6 GB).
  WriteRawModelFile(base.path(), "web", 3,
                    ModelBytesDeclaringFeatures(TestEnsemble(3),
                                                kMaxModelFeatures));
  // Version 4: 50 million features, with a valid checksum.
  WriteRawModelFile(base.path(), "web", 4,
                    ModelBytesDeclaringFeatures(TestEnsemble(4), 50000000));

  std::map<int64_t, v1::VersionStatus> versions = Reload(server);
  ASSERT_EQ(versions.size(), 4u) << server.stderr_text();
  EXPECT_EQ(versions[1].state(), v1::VERSION_STATE_AVAILABLE);
  EXPECT_EQ(versions[2].state(), v1::VERSION_STATE_FAILED);
  EXPECT_THAT(versions[2].error(), HasSubstr("web/2/model.pb"));
  EXPECT_THAT(versions[2].error(), HasSubstr("out of memory while loading"));
  EXPECT_EQ(versions[3].state(), v1::VERSION_STATE_AVAILABLE)
      << versions[3].error();
  EXPECT_EQ(versions[3].metadata().num_features(),
            static_cast<uint32_t>(kMaxModelFeatures));
  EXPECT_EQ(versions[4].state(), v1::VERSION_STATE_FAILED);
  EXPECT_THAT(versions[4].error(),
              HasSubstr("num_features 50000000 is above the limit"));

  // Sparse requests to the wide version cost rows of the 2 features its
  // trees read, not of 2^24.
  v1::RankResponse response;
  grpc::Status status =
      server.stub().Rank(ClientContextFor(60, false).get(), SparseRequest(3, 300), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.model_version(), 3);
  EXPECT_EQ(response.documents(0).score(), TestModelScore(3, 1.0f, 0.25f) -
                                               0.25);  // no linear part
  // The server is still up and its first version serves.
  response.Clear();
  ASSERT_TRUE(
      server.stub().Rank(ClientContextFor(60, false).get(), SparseRequest(1, 2), &response).ok());
  EXPECT_EQ(response.documents(0).score(), TestModelScore(1, 1.0f, 0.25f));
}

}  // namespace
}  // namespace plrank
