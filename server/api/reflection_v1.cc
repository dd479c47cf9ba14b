#include "server/api/reflection_v1.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"

namespace gpuprobe {
namespace {

namespace v1 = grpc::reflection::v1;
using google::protobuf::DescriptorPool;
using google::protobuf::FileDescriptor;

void Fail(v1::ServerReflectionResponse& response, grpc::StatusCode code,
          const std::string& message) {
  response.mutable_error_response()->set_error_code(code);
  response.mutable_error_response()->set_error_message(message);
}

// The file and every file it imports that this stream has not sent yet, the file first (as
// the reflection protocol asks, and as gRPC's own v1alpha answers).
void AddFiles(const FileDescriptor* file, std::set<std::string>& sent,
              v1::FileDescriptorResponse& out) {
  if (!sent.insert(file->name()).second) return;
  google::protobuf::FileDescriptorProto proto;
  file->CopyTo(&proto);
  proto.SerializeToString(out.add_file_descriptor_proto());
  for (int i = 0; i < file->dependency_count(); ++i) AddFiles(file->dependency(i), sent, out);
}

void Answer(const FileDescriptor* file, const std::string& what, std::set<std::string>& sent,
            v1::ServerReflectionResponse& response) {
  if (file == nullptr) return Fail(response, grpc::StatusCode::NOT_FOUND, what + " not found");
  AddFiles(file, sent, *response.mutable_file_descriptor_response());
}

}  // namespace

grpc::Status ReflectionV1::ServerReflectionInfo(
    grpc::ServerContext*,
    grpc::ServerReaderWriter<v1::ServerReflectionResponse, v1::ServerReflectionRequest>* stream) {
  const DescriptorPool* pool = DescriptorPool::generated_pool();
  std::set<std::string> sent;
  v1::ServerReflectionRequest request;
  while (stream->Read(&request)) {
    v1::ServerReflectionResponse response;
    response.set_valid_host(request.host());
    *response.mutable_original_request() = request;
    switch (request.message_request_case()) {
      case v1::ServerReflectionRequest::kFileByFilename:
        Answer(pool->FindFileByName(request.file_by_filename()),
               "file " + request.file_by_filename(), sent, response);
        break;
      case v1::ServerReflectionRequest::kFileContainingSymbol:
        Answer(pool->FindFileContainingSymbol(request.file_containing_symbol()),
               "symbol " + request.file_containing_symbol(), sent, response);
        break;
      case v1::ServerReflectionRequest::kFileContainingExtension: {
        const v1::ExtensionRequest& e = request.file_containing_extension();
        const google::protobuf::Descriptor* type = pool->FindMessageTypeByName(e.containing_type());
        const google::protobuf::FieldDescriptor* extension =
            type == nullptr ? nullptr : pool->FindExtensionByNumber(type, e.extension_number());
        Answer(extension == nullptr ? nullptr : extension->file(),
               absl::StrCat("extension ", e.extension_number(), " of ", e.containing_type()), sent,
               response);
        break;
      }
      case v1::ServerReflectionRequest::kAllExtensionNumbersOfType: {
        const google::protobuf::Descriptor* type =
            pool->FindMessageTypeByName(request.all_extension_numbers_of_type());
        if (type == nullptr) {
          Fail(response, grpc::StatusCode::NOT_FOUND,
               "type " + request.all_extension_numbers_of_type() + " not found");
          break;
        }
        std::vector<const google::protobuf::FieldDescriptor*> extensions;
        pool->FindAllExtensions(type, &extensions);
        v1::ExtensionNumberResponse* numbers = response.mutable_all_extension_numbers_response();
        numbers->set_base_type_name(type->full_name());
        for (const auto* extension : extensions) numbers->add_extension_number(extension->number());
        break;
      }
      case v1::ServerReflectionRequest::kListServices:
        for (const std::string& name : services_) {
          response.mutable_list_services_response()->add_service()->set_name(name);
        }
        break;
      case v1::ServerReflectionRequest::MESSAGE_REQUEST_NOT_SET:
        Fail(response, grpc::StatusCode::INVALID_ARGUMENT, "the request asks nothing");
        break;
    }
    if (!stream->Write(response)) break;
  }
  return grpc::Status::OK;
}

}  // namespace gpuprobe
