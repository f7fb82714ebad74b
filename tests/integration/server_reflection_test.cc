// Server reflection on the real plrank-server: the services it lists and the
// descriptors it serves are what grpcurl and similar tools use to call the
// API without the .proto files.

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "google/protobuf/descriptor.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "integration/reflection/reflection.grpc.pb.h"
#include "tests/testing/server_process.h"
#include "tests/testing/test_models.h"

namespace plrank {
namespace {

using ::grpc::reflection::v1alpha::ServerReflection;
using ::grpc::reflection::v1alpha::ServerReflectionRequest;
using ::grpc::reflection::v1alpha::ServerReflectionResponse;
using ::plrank::testing::ServerProcess;
using ::plrank::testing::TempDir;
using ::plrank::testing::WriteTestModel;

// Sends each request on one reflection stream and returns the responses.
std::vector<ServerReflectionResponse> Reflect(
    ServerProcess& server, const std::vector<ServerReflectionRequest>& requests) {
  auto stub = ServerReflection::NewStub(server.channel());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  auto stream = stub->ServerReflectionInfo(&context);
  std::vector<ServerReflectionResponse> responses;
  for (const ServerReflectionRequest& request : requests) {
    EXPECT_TRUE(stream->Write(request));
    ServerReflectionResponse response;
    EXPECT_TRUE(stream->Read(&response));
    responses.push_back(response);
  }
  stream->WritesDone();
  const grpc::Status status = stream->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
  return responses;
}

TEST(ServerReflectionTest, ListsServicesAndServesTheirDescriptors) {
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  ServerProcess server({"--model_base_path=" + base.path()});
  ASSERT_TRUE(server.ok()) << server.stderr_text();

  ServerReflectionRequest list;
  list.set_list_services("");
  ServerReflectionRequest ranker_file;
  ranker_file.set_file_containing_symbol("plrank.v1.Ranker");
  ServerReflectionRequest unknown;
  unknown.set_file_containing_symbol("plrank.v1.NoSuchService");
  const std::vector<ServerReflectionResponse> responses =
      Reflect(server, {list, ranker_file, unknown});
  ASSERT_EQ(responses.size(), 3u);

  std::vector<std::string> services;
  for (const auto& service : responses[0].list_services_response().service()) {
    services.push_back(service.name());
  }
  EXPECT_NE(std::find(services.begin(), services.end(), "plrank.v1.Ranker"),
            services.end());
  EXPECT_NE(std::find(services.begin(), services.end(),
                      "grpc.health.v1.Health"),
            services.end());

  // The file declaring plrank.v1.Ranker comes first; it must describe the
  // service's methods.
  ASSERT_TRUE(responses[1].has_file_descriptor_response());
  ASSERT_GE(responses[1].file_descriptor_response().file_descriptor_proto_size(),
            1);
  bool found_rank = false;
  for (const std::string& bytes :
       responses[1].file_descriptor_response().file_descriptor_proto()) {
    google::protobuf::FileDescriptorProto file;
    ASSERT_TRUE(file.ParseFromString(bytes));
    for (const auto& service : file.service()) {
      if (file.package() != "plrank.v1" || service.name() != "Ranker") continue;
      for (const auto& method : service.method()) {
        if (method.name() == "Rank") {
          found_rank = true;
          EXPECT_EQ(method.input_type(), ".plrank.v1.RankRequest");
          EXPECT_EQ(method.output_type(), ".plrank.v1.RankResponse");
        }
      }
    }
  }
  EXPECT_TRUE(found_rank);

  ASSERT_TRUE(responses[2].has_error_response());
  EXPECT_EQ(responses[2].error_response().error_code(),
            static_cast<int>(grpc::StatusCode::NOT_FOUND));
}

}  // namespace
}  // namespace plrank
