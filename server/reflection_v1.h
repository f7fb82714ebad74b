#ifndef PLRANK_SERVER_REFLECTION_V1_H_
#define PLRANK_SERVER_REFLECTION_V1_H_

#include <string>
#include <vector>

#include "grpc/reflection/v1/reflection.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace plrank::server {

// grpc.reflection.v1.ServerReflection over the process's generated
// descriptor pool, answering exactly as the v1alpha service gRPC's plugin
// registers (which stays): list_services lists `services`; file requests
// return the file's FileDescriptorProto and those of its dependencies not
// yet sent on this stream; unknown names get an error_response NOT_FOUND.
class ReflectionV1Service final
    : public grpc::reflection::v1::ServerReflection::Service {
 public:
  explicit ReflectionV1Service(std::vector<std::string> services);

  grpc::Status ServerReflectionInfo(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<grpc::reflection::v1::ServerReflectionResponse,
                               grpc::reflection::v1::ServerReflectionRequest>*
          stream) override;

 private:
  const std::vector<std::string> services_;
};

}  // namespace plrank::server

#endif  // PLRANK_SERVER_REFLECTION_V1_H_
