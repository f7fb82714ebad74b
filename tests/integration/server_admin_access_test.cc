// Who gets the admin RPCs (ReloadModels, ListModels, GetModelStatus),
// GetModelMetadata (everyone) and /metrics, seen from a client that is not on the loopback interface. The
// test process moves into a private network namespace whose `lo` also holds
// 192.0.2.1 (tests/testing/test_network_namespace.h): connecting to that
// address gives the server a non-loopback peer, and nothing leaves the
// namespace.

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "plrank/v1/ranker.grpc.pb.h"
#include "tests/testing/client_context.h"
#include "tests/testing/eventually.h"
#include "tests/testing/server_process.h"
#include "tests/testing/shared_data.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/test_models.h"
#include "tests/testing/test_network_namespace.h"

namespace plrank {
namespace {

using ::plrank::testing::ClientContextFor;
using ::plrank::testing::CanConnect;
using ::plrank::testing::kTestNonLoopbackAddress;
using ::plrank::testing::ReadWholeFile;
using ::plrank::testing::RunCommand;
using ::plrank::testing::ServerProcess;
using ::plrank::testing::TempDir;
using ::plrank::testing::WriteTestModel;
using ::testing::HasSubstr;

// Every test starts here, before anything in the process starts a thread.
// Without CAP_SYS_ADMIN (an unprivileged container) there is no namespace and
// the test skips, also in CI; the access rule itself is unit-tested in
// tests/unit/server/admin_access_test.cc.
#define PLRANK_ENTER_TEST_NETWORK_NAMESPACE()                               \
  do {                                                                      \
    const std::string why = ::plrank::testing::EnterTestNetworkNamespace(); \
    if (!why.empty()) {                                                     \
      GTEST_SKIP() << "no private network namespace here: " << why;         \
    }                                                                       \
  } while (0)

std::string Target(const std::string& address, int port) {
  return address + ":" + std::to_string(port);
}

// The status of each admin RPC and of Rank through `channel`.
struct Answers {
  grpc::Status list, status, reload, rank, metadata;
  v1::GetModelMetadataResponse metadata_response;
};

Answers Call(const std::shared_ptr<grpc::Channel>& channel) {
  auto stub = v1::Ranker::NewStub(channel);
  Answers answers;
  v1::ListModelsResponse list;
  answers.list =
      stub->ListModels(ClientContextFor(10, true).get(), v1::ListModelsRequest(), &list);
  v1::GetModelStatusRequest status_request;
  status_request.set_name("web");
  v1::GetModelStatusResponse status;
  answers.status =
      stub->GetModelStatus(ClientContextFor(10, true).get(), status_request, &status);
  v1::ReloadModelsResponse reload;
  answers.reload =
      stub->ReloadModels(ClientContextFor(10, true).get(), v1::ReloadModelsRequest(), &reload);
  v1::RankRequest rank_request;
  rank_request.mutable_model_spec()->set_name("web");
  v1::Document* document = rank_request.add_documents();
  for (int f = 0; f < ::plrank::testing::kTestModelFeatures; ++f) {
    document->mutable_dense()->add_values(0.5f);
  }
  v1::RankResponse rank;
  answers.rank = stub->Rank(ClientContextFor(10, true).get(), rank_request, &rank);
  v1::GetModelMetadataRequest metadata_request;
  metadata_request.mutable_model_spec()->set_name("web");
  answers.metadata = stub->GetModelMetadata(ClientContextFor(10, true).get(), metadata_request,
                                            &answers.metadata_response);
  return answers;
}

std::shared_ptr<grpc::Channel> Insecure(const std::string& target) {
  return grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
}

// The server listens before its first scan has loaded the models: wait
// until "web" answers.
void WaitUntilRanks(const std::shared_ptr<grpc::Channel>& channel) {
  ::plrank::testing::Eventually([&] { return Call(channel).rank.ok(); });
}

TEST(AdminAccessTest, AdminRpcsAndMetricsStayOnLoopbackByDefault) {
  PLRANK_ENTER_TEST_NETWORK_NAMESPACE();
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  ServerProcess server({"--model_base_path=" + base.path(), "--host=0.0.0.0",
                        "--poll_interval_seconds=0"});
  ASSERT_TRUE(server.ok()) << server.stderr_text();
  WaitUntilRanks(Insecure(Target("127.0.0.1", server.port())));

  const Answers remote =
      Call(Insecure(Target(kTestNonLoopbackAddress, server.port())));
  EXPECT_TRUE(remote.rank.ok()) << remote.rank.error_message();
  // Model metadata is public: what a client needs to build requests.
  ASSERT_TRUE(remote.metadata.ok()) << remote.metadata.error_message();
  EXPECT_EQ(remote.metadata_response.num_features(),
            static_cast<uint32_t>(::plrank::testing::kTestModelFeatures));
  EXPECT_EQ(remote.metadata_response.model_version(), 1);
  for (const auto& [name, status] :
       {std::pair{"ListModels", remote.list},
        std::pair{"GetModelStatus", remote.status},
        std::pair{"ReloadModels", remote.reload}}) {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
        << name;
    EXPECT_THAT(status.error_message(),
                HasSubstr(std::string(name) + " is an admin RPC"));
    EXPECT_THAT(status.error_message(), HasSubstr("--admin_from_any"));
  }

  const Answers local = Call(Insecure(Target("127.0.0.1", server.port())));
  EXPECT_TRUE(local.list.ok()) << local.list.error_message();
  EXPECT_TRUE(local.status.ok()) << local.status.error_message();
  EXPECT_TRUE(local.reload.ok()) << local.reload.error_message();
  EXPECT_TRUE(local.rank.ok()) << local.rank.error_message();

  // /metrics (plain HTTP) is on 127.0.0.1 only.
  EXPECT_TRUE(CanConnect("127.0.0.1", server.metrics_port()));
  EXPECT_FALSE(CanConnect(kTestNonLoopbackAddress, server.metrics_port()));
}

TEST(AdminAccessTest, FlagsOpenAdminRpcsAndMetricsToEveryone) {
  PLRANK_ENTER_TEST_NETWORK_NAMESPACE();
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  ServerProcess server({"--model_base_path=" + base.path(), "--host=0.0.0.0",
                        "--admin_from_any", "--metrics_host=0.0.0.0",
                        "--poll_interval_seconds=0"});
  ASSERT_TRUE(server.ok()) << server.stderr_text();
  WaitUntilRanks(Insecure(Target("127.0.0.1", server.port())));
  const Answers remote =
      Call(Insecure(Target(kTestNonLoopbackAddress, server.port())));
  EXPECT_TRUE(remote.list.ok()) << remote.list.error_message();
  EXPECT_TRUE(remote.status.ok()) << remote.status.error_message();
  EXPECT_TRUE(remote.reload.ok()) << remote.reload.error_message();
  EXPECT_TRUE(CanConnect(kTestNonLoopbackAddress, server.metrics_port()));
}

// A ranking client elsewhere needs no admin RPC: plrank-client learns the
// data's width from GetModelMetadata and ranks with default flags, as it
// does with --num_features; the Python CLI too.
TEST(AdminAccessTest, RemoteRankingClientsWorkWithoutAdminRpcs) {
  PLRANK_ENTER_TEST_NETWORK_NAMESPACE();
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  ServerProcess server({"--model_base_path=" + base.path(), "--host=0.0.0.0",
                        "--poll_interval_seconds=0"});
  ASSERT_TRUE(server.ok()) << server.stderr_text();
  WaitUntilRanks(Insecure(Target("127.0.0.1", server.port())));
  std::ofstream(base.File("query.txt")) << "1 qid:1 1:0.9 2:0.5\n"
                                           "0 qid:1 1:0.1 2:0.2\n";
  const std::vector<std::string> rank = {
      ::plrank::testing::BinPath("plrank-client"),
      "--target=" + Target(kTestNonLoopbackAddress, server.port()),
      "--model=web", "rank", "--data=" + base.File("query.txt")};
  std::vector<std::string> asking = rank;
  asking.push_back("--scores_out=" + base.File("asked.scores"));
  const auto asked = RunCommand(asking);
  EXPECT_EQ(asked.exit_code, 0) << asked.err;
  EXPECT_THAT(asked.out, HasSubstr("(web v1)"));
  std::vector<std::string> told = rank;
  told.push_back("--num_features=4");
  told.push_back("--scores_out=" + base.File("told.scores"));
  const auto ranked = RunCommand(told);
  EXPECT_EQ(ranked.exit_code, 0) << ranked.err;
  EXPECT_FALSE(ReadWholeFile(base.File("asked.scores")).empty());
  EXPECT_EQ(ReadWholeFile(base.File("asked.scores")),
            ReadWholeFile(base.File("told.scores")));

  std::vector<std::string> python = rank;
  python[0] = ::plrank::testing::BinPath("plrank-client-py");
  const auto python_asked = RunCommand(python);
  EXPECT_EQ(python_asked.exit_code, 0) << python_asked.err;
  EXPECT_THAT(python_asked.out, HasSubstr("(web v1)"));

  // The admin commands still need admin rights.
  std::vector<std::string> status = rank;
  status[3] = "status";
  status.pop_back();
  const auto denied = RunCommand(status);
  EXPECT_EQ(denied.exit_code, 1) << denied.out;
  EXPECT_THAT(denied.err, HasSubstr("GetModelStatus is an admin RPC"));
}

bool Openssl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv).exit_code == 0;
}

// A CA; a server certificate for 127.0.0.1 and the test address; client
// certificates with common names "admin" and "ranker".
bool MakeCertificates(const TempDir& dir) {
  const std::string ca_key = dir.File("ca.key"), ca = dir.File("ca.pem");
  if (!Openssl({"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                ca_key, "-out", ca, "-days", "1", "-subj", "/CN=plrank-ca"})) {
    return false;
  }
  std::ofstream(dir.File("san.ext"))
      << "subjectAltName=IP:127.0.0.1,IP:" << kTestNonLoopbackAddress << "\n";
  for (const std::string name : {"server", "admin", "ranker"}) {
    if (!Openssl({"req", "-newkey", "rsa:2048", "-nodes", "-keyout",
                  dir.File(name + ".key"), "-out", dir.File(name + ".csr"),
                  "-subj", "/CN=" + name}) ||
        !Openssl({"x509", "-req", "-in", dir.File(name + ".csr"), "-CA", ca,
                  "-CAkey", ca_key, "-CAcreateserial", "-days", "1",
                  "-extfile", dir.File("san.ext"), "-out",
                  dir.File(name + ".pem")})) {
      return false;
    }
  }
  return true;
}

std::shared_ptr<grpc::Channel> Mtls(const TempDir& dir,
                                    const std::string& client,
                                    const std::string& target) {
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = ReadWholeFile(dir.File("ca.pem"));
  options.pem_private_key = ReadWholeFile(dir.File(client + ".key"));
  options.pem_cert_chain = ReadWholeFile(dir.File(client + ".pem"));
  return grpc::CreateChannel(target, grpc::SslCredentials(options));
}

// With mTLS, --admin_tls_identities names the client certificates that get
// the admin RPCs from anywhere; other verified clients only rank.
TEST(AdminAccessTest, NamedClientCertificatesGetAdminRpcs) {
  PLRANK_ENTER_TEST_NETWORK_NAMESPACE();
  if (access("/usr/bin/openssl", X_OK) != 0) GTEST_SKIP() << "no openssl";
  TempDir dir;
  ASSERT_TRUE(MakeCertificates(dir));
  WriteTestModel(dir.path() + "/models", "web", 1);
  ServerProcess server({"--model_base_path=" + dir.path() + "/models",
                        "--host=0.0.0.0", "--poll_interval_seconds=0",
                        "--tls_cert_file=" + dir.File("server.pem"),
                        "--tls_key_file=" + dir.File("server.key"),
                        "--tls_ca_file=" + dir.File("ca.pem"),
                        "--admin_tls_identities=admin,ops"});
  ASSERT_TRUE(server.ok()) << server.stderr_text();
  const std::string target = Target(kTestNonLoopbackAddress, server.port());
  WaitUntilRanks(Mtls(dir, "ranker", target));

  const Answers admin = Call(Mtls(dir, "admin", target));
  EXPECT_TRUE(admin.list.ok()) << admin.list.error_message();
  EXPECT_TRUE(admin.status.ok()) << admin.status.error_message();
  EXPECT_TRUE(admin.reload.ok()) << admin.reload.error_message();

  const Answers ranker = Call(Mtls(dir, "ranker", target));
  EXPECT_TRUE(ranker.rank.ok()) << ranker.rank.error_message();
  EXPECT_EQ(ranker.list.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(ranker.list.error_message(),
              HasSubstr("--admin_tls_identities"));
  EXPECT_EQ(ranker.reload.error_code(), grpc::StatusCode::PERMISSION_DENIED);
}

}  // namespace
}  // namespace plrank
