#include "server/reflection_v1.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"

namespace plrank::server {
namespace {

using google::protobuf::DescriptorPool;
using google::protobuf::FileDescriptor;
using grpc::reflection::v1::ServerReflectionRequest;
using grpc::reflection::v1::ServerReflectionResponse;

// Adds `file` and, depth first, its dependencies not in `sent`.
void AddFile(const FileDescriptor* file, std::set<std::string>* sent,
             ServerReflectionResponse* response) {
  if (!sent->insert(file->name()).second) return;
  google::protobuf::FileDescriptorProto proto;
  file->CopyTo(&proto);
  response->mutable_file_descriptor_response()->add_file_descriptor_proto(
      proto.SerializeAsString());
  for (int i = 0; i < file->dependency_count(); ++i) {
    AddFile(file->dependency(i), sent, response);
  }
}

void NotFound(const std::string& what, ServerReflectionResponse* response) {
  auto* error = response->mutable_error_response();
  error->set_error_code(static_cast<int>(grpc::StatusCode::NOT_FOUND));
  error->set_error_message(what + " not found");
}

}  // namespace

ReflectionV1Service::ReflectionV1Service(std::vector<std::string> services)
    : services_(std::move(services)) {}

grpc::Status ReflectionV1Service::ServerReflectionInfo(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<ServerReflectionResponse,
                             ServerReflectionRequest>* stream) {
  const DescriptorPool* pool = DescriptorPool::generated_pool();
  std::set<std::string> sent;
  ServerReflectionRequest request;
  while (stream->Read(&request)) {
    ServerReflectionResponse response;
    response.set_valid_host(request.host());
    *response.mutable_original_request() = request;
    switch (request.message_request_case()) {
      case ServerReflectionRequest::kListServices:
        for (const std::string& name : services_) {
          response.mutable_list_services_response()->add_service()->set_name(
              name);
        }
        break;
      case ServerReflectionRequest::kFileByFilename: {
        const FileDescriptor* file =
            pool->FindFileByName(request.file_by_filename());
        if (file == nullptr) {
          NotFound("file " + request.file_by_filename(), &response);
        } else {
          AddFile(file, &sent, &response);
        }
        break;
      }
      case ServerReflectionRequest::kFileContainingSymbol: {
        const FileDescriptor* file =
            pool->FindFileContainingSymbol(request.file_containing_symbol());
        if (file == nullptr) {
          NotFound("symbol " + request.file_containing_symbol(), &response);
        } else {
          AddFile(file, &sent, &response);
        }
        break;
      }
      case ServerReflectionRequest::kFileContainingExtension: {
        const auto& wanted = request.file_containing_extension();
        const auto* type = pool->FindMessageTypeByName(wanted.containing_type());
        const auto* extension =
            type == nullptr ? nullptr
                            : pool->FindExtensionByNumber(
                                  type, wanted.extension_number());
        if (extension == nullptr) {
          NotFound("extension", &response);
        } else {
          AddFile(extension->file(), &sent, &response);
        }
        break;
      }
      case ServerReflectionRequest::kAllExtensionNumbersOfType: {
        const auto* type =
            pool->FindMessageTypeByName(request.all_extension_numbers_of_type());
        if (type == nullptr) {
          NotFound("type " + request.all_extension_numbers_of_type(),
                   &response);
        } else {
          std::vector<const google::protobuf::FieldDescriptor*> extensions;
          pool->FindAllExtensions(type, &extensions);
          auto* numbers = response.mutable_all_extension_numbers_response();
          numbers->set_base_type_name(type->full_name());
          for (const auto* field : extensions) {
            numbers->add_extension_number(field->number());
          }
        }
        break;
      }
      default: {
        auto* error = response.mutable_error_response();
        error->set_error_code(static_cast<int>(grpc::StatusCode::UNIMPLEMENTED));
        error->set_error_message("unknown reflection request");
      }
    }
    if (!stream->Write(response)) break;
  }
  return grpc::Status::OK;
}

}  // namespace plrank::server
