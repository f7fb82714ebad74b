// plrank-server with TLS and mutual TLS (certificates made with the openssl
// CLI; the test is skipped where it is not installed).

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "plrank/v1/ranker.grpc.pb.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/test_models.h"

namespace plrank {
namespace {

using ::plrank::testing::ReadWholeFile;
using ::plrank::testing::RunCommand;
using ::plrank::testing::ServerProcess;
using ::plrank::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

bool Openssl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv).exit_code == 0;
}

// CA, plus a key and CA-signed certificate for `name` (SAN 127.0.0.1).
bool MakeCertificates(const TempDir& dir) {
  const std::string ca_key = dir.File("ca.key"), ca = dir.File("ca.pem");
  if (!Openssl({"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                ca_key, "-out", ca, "-days", "1", "-subj", "/CN=plrank-ca"})) {
    return false;
  }
  std::ofstream(dir.File("san.ext")) << "subjectAltName=IP:127.0.0.1\n";
  for (const std::string name : {"server", "client"}) {
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

grpc::StatusCode ListModels(const std::string& address,
                            const grpc::SslCredentialsOptions& options) {
  auto channel = grpc::CreateChannel(address, grpc::SslCredentials(options));
  auto stub = v1::Ranker::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(5));
  v1::ListModelsResponse response;
  return stub->ListModels(&context, v1::ListModelsRequest(), &response)
      .error_code();
}

TEST(ServerTlsTest, MutualTlsRequiresAClientCertificate) {
  if (access("/usr/bin/openssl", X_OK) != 0) GTEST_SKIP() << "no openssl";
  TempDir dir;
  ASSERT_TRUE(MakeCertificates(dir));
  plrank::testing::WriteTestModel(dir.path() + "/models", "web", 1);
  ServerProcess server({"--model_base_path=" + dir.path() + "/models",
                        "--tls_cert_file=" + dir.File("server.pem"),
                        "--tls_key_file=" + dir.File("server.key"),
                        "--tls_ca_file=" + dir.File("ca.pem")});
  ASSERT_TRUE(server.ok()) << server.stderr_text();

  grpc::SslCredentialsOptions with_cert;
  with_cert.pem_root_certs = ReadWholeFile(dir.File("ca.pem"));
  with_cert.pem_private_key = ReadWholeFile(dir.File("client.key"));
  with_cert.pem_cert_chain = ReadWholeFile(dir.File("client.pem"));
  EXPECT_EQ(ListModels(server.target(), with_cert), grpc::StatusCode::OK);

  grpc::SslCredentialsOptions without_cert;
  without_cert.pem_root_certs = with_cert.pem_root_certs;
  EXPECT_NE(ListModels(server.target(), without_cert), grpc::StatusCode::OK);
}

// A bad PEM file stops the server with what is wrong with it (checked with
// OpenSSL before gRPC sees it), not gRPC's "cannot listen on ...".
TEST(ServerTlsTest, BadTlsFilesSayWhatIsWrong) {
  if (access("/usr/bin/openssl", X_OK) != 0) GTEST_SKIP() << "no openssl";
  TempDir dir;
  ASSERT_TRUE(MakeCertificates(dir));
  plrank::testing::WriteTestModel(dir.path() + "/models", "web", 1);
  std::ofstream(dir.File("garbage.pem")) << "this is not a PEM file\n";
  // A certificate whose body is cut in half.
  const std::string cert = ReadWholeFile(dir.File("server.pem"));
  std::ofstream(dir.File("cut.pem"))
      << ReadWholeFile(dir.File("ca.pem")) << cert.substr(0, cert.size() / 2)
      << "\n-----END CERTIFICATE-----\n";
  // A self-signed certificate whose validity ended yesterday.
  ASSERT_TRUE(Openssl({"x509", "-req", "-in", dir.File("server.csr"),
                       "-signkey", dir.File("server.key"), "-days", "-1",
                       "-out", dir.File("expired.pem")}));
  struct Case {
    std::string cert, key, ca;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"server.pem", "client.key", "",
       "TLS key " + dir.File("client.key") +
           " does not match the certificate " + dir.File("server.pem")},
      {"server.pem", "server.key", "garbage.pem",
       "TLS CA " + dir.File("garbage.pem") + ": no PEM certificate in it"},
      {"server.pem", "server.key", "cut.pem",
       "TLS CA " + dir.File("cut.pem") +
           ": certificate 2 in the file is malformed"},
      {"garbage.pem", "server.key", "",
       "TLS certificate " + dir.File("garbage.pem") +
           ": no PEM certificate in it"},
      {"server.pem", "garbage.pem", "",
       "TLS key " + dir.File("garbage.pem") + ": no usable PEM private key"},
      {"server.pem", "server.pem", "",
       "TLS key " + dir.File("server.pem") + ": no usable PEM private key"},
      {"expired.pem", "server.key", "",
       "TLS certificate " + dir.File("expired.pem") +
           ": the certificate expired on "},
  };
  for (const Case& c : cases) {
    std::vector<std::string> flags = {
        "--model_base_path=" + dir.path() + "/models",
        "--tls_cert_file=" + dir.File(c.cert),
        "--tls_key_file=" + dir.File(c.key)};
    if (!c.ca.empty()) flags.push_back("--tls_ca_file=" + dir.File(c.ca));
    ServerProcess server(flags);
    EXPECT_FALSE(server.ok()) << c.expected;
    EXPECT_THAT(server.stderr_text(), HasSubstr(c.expected));
    EXPECT_THAT(server.stderr_text(), Not(HasSubstr("cannot listen")));
  }
}

}  // namespace
}  // namespace plrank
