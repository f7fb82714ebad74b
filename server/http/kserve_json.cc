#include "server/http/kserve_json.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "server/http/json_text.h"

namespace plrank::server {
namespace {

using nlohmann::json;
using inference::ModelInferRequest;

constexpr int kMaxJsonDepth = 32;

// nlohmann's parser recurses per nesting level: refuse deep documents
// before parsing, so a request cannot exhaust the stack.
bool WithinDepth(absl::string_view text) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

absl::StatusOr<json> Parse(absl::string_view body) {
  if (!WithinDepth(body)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the JSON body nests deeper than ", kMaxJsonDepth, " levels"));
  }
  json document = json::parse(body.begin(), body.end(), nullptr,
                              /*allow_exceptions=*/false);
  if (document.is_discarded()) {
    return absl::InvalidArgumentError("the body is not valid JSON");
  }
  return document;
}

absl::Status FieldError(const std::string& field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(field, " ", what));
}

// Appends the leaves of `data` (nested arrays, row-major) to `out`.
template <typename Leaf>
absl::Status Flatten(const json& data, const std::string& field, Leaf leaf) {
  if (!data.is_array()) return leaf(data, field);
  for (size_t i = 0; i < data.size(); ++i) {
    if (absl::Status status = Flatten(data[i], field, leaf); !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

absl::Status ReadInput(const json& input, int index, ModelInferRequest* out) {
  const std::string field = absl::StrCat("inputs[", index, "]");
  if (!input.is_object()) return FieldError(field, "is not an object");
  auto* tensor = out->add_inputs();
  const auto name = input.find("name");
  const auto datatype = input.find("datatype");
  const auto shape = input.find("shape");
  const auto data = input.find("data");
  if (name == input.end() || !name->is_string()) {
    return FieldError(field + ".name", "must be a string");
  }
  tensor->set_name(name->get<std::string>());
  if (datatype == input.end() || !datatype->is_string()) {
    return FieldError(field + ".datatype", "must be a string");
  }
  tensor->set_datatype(datatype->get<std::string>());
  if (shape == input.end() || !shape->is_array()) {
    return FieldError(field + ".shape", "must be an array of integers");
  }
  for (const json& dim : *shape) {
    if (!dim.is_number_integer()) {
      return FieldError(field + ".shape", "must be an array of integers");
    }
    tensor->add_shape(dim.get<int64_t>());
  }
  if (data == input.end()) return FieldError(field + ".data", "is missing");
  const std::string data_field = field + ".data";
  auto* contents = tensor->mutable_contents();
  const std::string& type = tensor->datatype();
  if (type == "FP32" || type == "FP64") {
    const bool fp32 = type == "FP32";
    return Flatten(*data, data_field,
                   [&](const json& leaf, const std::string& f) {
                     double value;
                     if (leaf.is_null()) {
                       value = std::numeric_limits<double>::quiet_NaN();
                     } else if (leaf.is_number()) {
                       value = leaf.get<double>();
                     } else {
                       return FieldError(f, "holds a non-number");
                     }
                     if (fp32) {
                       contents->add_fp32_contents(static_cast<float>(value));
                     } else {
                       contents->add_fp64_contents(value);
                     }
                     return absl::OkStatus();
                   });
  }
  if (type == "INT64" || type == "INT32") {
    const bool wide = type == "INT64";
    return Flatten(
        *data, data_field, [&](const json& leaf, const std::string& f) {
          if (!leaf.is_number_integer()) {
            return FieldError(f, "holds a non-integer");
          }
          if (leaf.is_number_unsigned() &&
              leaf.get<uint64_t>() >
                  static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
            return FieldError(f, "holds an integer out of range");
          }
          const int64_t value = leaf.get<int64_t>();
          if (wide) {
            contents->add_int64_contents(value);
          } else if (value < std::numeric_limits<int32_t>::min() ||
                     value > std::numeric_limits<int32_t>::max()) {
            return FieldError(f, "holds an integer out of INT32's range");
          } else {
            contents->add_int_contents(static_cast<int32_t>(value));
          }
          return absl::OkStatus();
        });
  }
  return FieldError(field + ".datatype",
                    absl::StrCat("'", type,
                                 "' is not supported (FP32, FP64, INT32, "
                                 "INT64)"));
}

json TensorData(const inference::InferTensorContents& contents,
                const std::string& datatype) {
  json data = json::array();
  if (datatype == "FP32") {
    for (float v : contents.fp32_contents()) {
      data.push_back(std::isnan(v) ? json() : json(static_cast<double>(v)));
    }
  } else if (datatype == "FP64") {
    for (double v : contents.fp64_contents()) {
      data.push_back(std::isnan(v) ? json() : json(v));
    }
  } else if (datatype == "INT64") {
    for (int64_t v : contents.int64_contents()) data.push_back(v);
  }
  return data;
}

}  // namespace

absl::StatusOr<ModelInferRequest> InferRequestFromJson(
    absl::string_view body, absl::string_view name,
    absl::string_view version) {
  absl::StatusOr<json> document = Parse(body);
  if (!document.ok()) return document.status();
  if (!document->is_object()) {
    return absl::InvalidArgumentError(
        "the inference request must be a JSON object");
  }
  ModelInferRequest request;
  request.set_model_name(std::string(name));
  request.set_model_version(std::string(version));
  if (auto id = document->find("id"); id != document->end()) {
    if (!id->is_string()) return FieldError("id", "must be a string");
    request.set_id(id->get<std::string>());
  }
  const auto inputs = document->find("inputs");
  if (inputs == document->end() || !inputs->is_array()) {
    return FieldError("inputs", "must be an array of tensors");
  }
  for (size_t i = 0; i < inputs->size(); ++i) {
    if (absl::Status status =
            ReadInput((*inputs)[i], static_cast<int>(i), &request);
        !status.ok()) {
      return status;
    }
  }
  if (auto outputs = document->find("outputs"); outputs != document->end()) {
    if (!outputs->is_array()) {
      return FieldError("outputs", "must be an array of {\"name\": ...}");
    }
    for (size_t i = 0; i < outputs->size(); ++i) {
      const json& output = (*outputs)[i];
      const auto output_name =
          output.is_object() ? output.find("name") : output.end();
      if (!output.is_object() || output_name == output.end() ||
          !output_name->is_string()) {
        return FieldError(absl::StrCat("outputs[", i, "].name"),
                          "must be a string");
      }
      request.add_outputs()->set_name(output_name->get<std::string>());
    }
  }
  return request;
}

std::string InferResponseToJson(
    const inference::ModelInferResponse& response) {
  json out = {{"model_name", response.model_name()},
              {"model_version", response.model_version()}};
  if (!response.id().empty()) out["id"] = response.id();
  json outputs = json::array();
  for (const auto& tensor : response.outputs()) {
    json shape = json::array();
    for (int64_t dim : tensor.shape()) shape.push_back(dim);
    outputs.push_back({{"name", tensor.name()},
                       {"datatype", tensor.datatype()},
                       {"shape", shape},
                       {"data", TensorData(tensor.contents(),
                                           tensor.datatype())}});
  }
  out["outputs"] = outputs;
  return JsonText(out);
}

std::string ModelMetadataToJson(
    const inference::ModelMetadataResponse& metadata) {
  auto tensors = [](const auto& list) {
    json out = json::array();
    for (const auto& tensor : list) {
      json shape = json::array();
      for (int64_t dim : tensor.shape()) shape.push_back(dim);
      out.push_back({{"name", tensor.name()},
                     {"datatype", tensor.datatype()},
                     {"shape", shape}});
    }
    return out;
  };
  json versions = json::array();
  for (const std::string& version : metadata.versions()) {
    versions.push_back(version);
  }
  return JsonText(json({{"name", metadata.name()},
                        {"versions", versions},
                        {"platform", metadata.platform()},
                        {"inputs", tensors(metadata.inputs())},
                        {"outputs", tensors(metadata.outputs())}}));
}

std::string ServerMetadataToJson(
    const inference::ServerMetadataResponse& metadata) {
  json extensions = json::array();
  for (const std::string& e : metadata.extensions()) extensions.push_back(e);
  return JsonText(json({{"name", metadata.name()},
                        {"version", metadata.version()},
                        {"extensions", extensions}}));
}

std::string ErrorJson(absl::string_view message) {
  return JsonText(json({{"error", std::string(message)}}));
}

}  // namespace plrank::server
