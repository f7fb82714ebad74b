#include "server/kserve/open_inference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/program.h"
#include "core/data/ranking_order.h"
#include "server/lifecycle/servable_version.h"
#include "server/request_record.h"
#include "server/lifecycle/serving_snapshot.h"

namespace plrank::server {
namespace {

using inference::ModelInferRequest;
using inference::ModelInferResponse;

constexpr char kFeatures[] = "features";
constexpr char kQueryOffsets[] = "query_offsets";
constexpr char kScores[] = "scores";
constexpr char kScoresFp64[] = "scores_fp64";
constexpr char kRanks[] = "ranks";
constexpr char kOrder[] = "order";

// Documents scored between two interrupt checks (as DocumentScorer).
constexpr size_t kChunkDocs = 4096;

// One input tensor's elements, wherever the request put them.
template <typename T>
struct TensorView {
  const T* data = nullptr;
  size_t size = 0;
};

// The elements of input `index` as T: from raw_input_contents (little-endian
// bytes; this server only runs on little-endian machines) or from the typed
// field `typed`. Checks that there are exactly `expected` elements.
template <typename T, typename Repeated>
absl::StatusOr<TensorView<T>> Elements(const ModelInferRequest& request,
                                       int index, const Repeated& typed,
                                       size_t expected) {
  const ModelInferRequest::InferInputTensor& input = request.inputs(index);
  TensorView<T> view;
  if (request.raw_input_contents_size() > 0) {
    if (request.raw_input_contents_size() != request.inputs_size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "raw_input_contents has ", request.raw_input_contents_size(),
          " entries for ", request.inputs_size(),
          " inputs (one per input, in order)"));
    }
    if (input.has_contents()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", input.name(),
          "' has contents although raw_input_contents is used"));
    }
    const std::string& raw = request.raw_input_contents(index);
    if (raw.size() != expected * sizeof(T)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", input.name(), "': raw_input_contents holds ", raw.size(),
          " bytes, its shape and datatype need ", expected * sizeof(T)));
    }
    view.data = reinterpret_cast<const T*>(raw.data());
    view.size = expected;
    return view;
  }
  if (static_cast<size_t>(typed.size()) != expected) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input '", input.name(), "': contents hold ", typed.size(),
        " elements, its shape needs ", expected));
  }
  view.data = typed.data();
  view.size = expected;
  return view;
}

absl::Status CheckShape(const ModelInferRequest::InferInputTensor& input,
                        int rank) {
  if (input.shape_size() != rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input '", input.name(), "' has ", input.shape_size(),
        " dimensions, expected ", rank));
  }
  for (int64_t dim : input.shape()) {
    if (dim < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", input.name(), "' has a negative dimension ", dim));
    }
  }
  return absl::OkStatus();
}

// Query boundaries [0, ..., N] from the optional offsets tensor.
absl::StatusOr<std::vector<size_t>> QueryBoundaries(
    const ModelInferRequest& request, int index, size_t num_docs) {
  std::vector<size_t> bounds;
  if (index < 0) {
    bounds = {0, num_docs};
    return bounds;
  }
  const ModelInferRequest::InferInputTensor& input = request.inputs(index);
  if (input.datatype() != "INT64") {
    return absl::InvalidArgumentError(absl::StrCat(
        "input 'query_offsets' must be INT64, got '", input.datatype(), "'"));
  }
  if (absl::Status shape = CheckShape(input, 1); !shape.ok()) return shape;
  const size_t count = static_cast<size_t>(input.shape(0));
  absl::StatusOr<TensorView<int64_t>> offsets = Elements<int64_t>(
      request, index, input.contents().int64_contents(), count);
  if (!offsets.ok()) return offsets.status();
  if (count == 0 || offsets->data[0] != 0) {
    return absl::InvalidArgumentError(
        "input 'query_offsets' must start with 0 (the first query's first "
        "row)");
  }
  bounds.reserve(count + 1);
  for (size_t q = 0; q < count; ++q) {
    const int64_t offset = offsets->data[q];
    if (q > 0 && offset <= static_cast<int64_t>(bounds.back())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input 'query_offsets' must be strictly increasing (every query "
          "has rows): element ", q, " is ", offset, " after ", bounds.back()));
    }
    if (offset > static_cast<int64_t>(num_docs)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input 'query_offsets' element ", q, " is ", offset,
          ", past the ", num_docs, " rows of 'features'"));
    }
    bounds.push_back(static_cast<size_t>(offset));
  }
  if (bounds.back() != num_docs) bounds.push_back(num_docs);
  return bounds;
}

// Which outputs to return: the requested ones (each known, none twice), or
// scores, ranks and order when none is requested.
absl::StatusOr<std::vector<std::string>> RequestedOutputs(
    const ModelInferRequest& request) {
  std::vector<std::string> outputs;
  if (request.outputs_size() == 0) return std::vector<std::string>{
      kScores, kRanks, kOrder};
  for (const auto& output : request.outputs()) {
    const std::string& name = output.name();
    if (name != kScores && name != kScoresFp64 && name != kRanks &&
        name != kOrder) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown output '", name,
          "'; this model has scores, scores_fp64, ranks and order"));
    }
    if (std::find(outputs.begin(), outputs.end(), name) != outputs.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("output '", name, "' is requested twice"));
    }
    outputs.push_back(name);
  }
  return outputs;
}

template <typename T>
void AppendRaw(const std::vector<T>& values, ModelInferResponse* response) {
  std::string* raw = response->add_raw_output_contents();
  raw->resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(raw->data(), values.data(), raw->size());
}

}  // namespace

absl::StatusOr<VersionSelector> InferenceSelector(absl::string_view name,
                                                  absl::string_view version) {
  if (name.empty()) {
    return absl::InvalidArgumentError("the model name is empty");
  }
  VersionSelector selector{.name = std::string(name)};
  if (version.empty()) return selector;
  const bool digits = std::all_of(version.begin(), version.end(), [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c));
  });
  if (!digits) {
    selector.label = std::string(version);
    return selector;
  }
  int64_t number = 0;
  if (!absl::SimpleAtoi(version, &number) || number <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model version '", version,
        "' is not a positive version number (or a label)"));
  }
  selector.version = number;
  return selector;
}

OpenInference::OpenInference(VersionManager* manager, ServerMetrics* metrics,
                             RequestLimits limits)
    : manager_(manager), metrics_(metrics), limits_(limits) {}

inference::ServerLiveResponse OpenInference::ServerLive(
    absl::string_view protocol) {
  RequestRecord(metrics_, "ServerLive", protocol, /*server_wide=*/true)
      .Done(absl::OkStatus());
  inference::ServerLiveResponse response;
  response.set_live(true);
  return response;
}

inference::ServerReadyResponse OpenInference::ServerReady(
    absl::string_view protocol) {
  RequestRecord(metrics_, "ServerReady", protocol, /*server_wide=*/true)
      .Done(absl::OkStatus());
  inference::ServerReadyResponse response;
  response.set_ready(manager_->snapshot()->AnyModelAvailable());
  return response;
}

absl::StatusOr<inference::ModelReadyResponse> OpenInference::ModelReady(
    const inference::ModelReadyRequest& request, absl::string_view protocol) {
  RequestRecord record(metrics_, "ModelReady", protocol);
  const std::shared_ptr<const ServingSnapshot> snapshot = manager_->snapshot();
  record.SetModel(request.name(), snapshot->models.count(request.name()) > 0);
  absl::StatusOr<VersionSelector> selector =
      InferenceSelector(request.name(), request.version());
  if (!selector.ok()) return record.Done(selector.status());
  inference::ModelReadyResponse response;
  response.set_ready(snapshot->Resolve(*selector).ok());
  record.Done(absl::OkStatus());
  return response;
}

inference::ServerMetadataResponse OpenInference::ServerMetadata(
    absl::string_view protocol) {
  RequestRecord(metrics_, "ServerMetadata", protocol, /*server_wide=*/true)
      .Done(absl::OkStatus());
  inference::ServerMetadataResponse response;
  response.set_name("plrank-server");
  response.set_version(std::string(PlrankVersion()));
  return response;
}

absl::StatusOr<inference::ModelMetadataResponse> OpenInference::ModelMetadata(
    const inference::ModelMetadataRequest& request,
    absl::string_view protocol) {
  RequestRecord record(metrics_, "ModelMetadata", protocol);
  const std::shared_ptr<const ServingSnapshot> snapshot = manager_->snapshot();
  record.SetModel(request.name(), snapshot->models.count(request.name()) > 0);
  auto finish = [&](absl::Status status) { return record.Done(status); };
  absl::StatusOr<VersionSelector> selector =
      InferenceSelector(request.name(), request.version());
  if (!selector.ok()) return finish(selector.status());
  auto version = snapshot->Resolve(*selector);
  if (!version.ok()) return finish(version.status());
  record.SetVersion(*version);
  const ModelSnapshot& models = snapshot->models.at((*version)->model());
  inference::ModelMetadataResponse response;
  response.set_name((*version)->model());
  for (const auto& [number, servable] : models.available) {
    response.add_versions(absl::StrCat(number));
  }
  response.set_platform("plrank");
  const int64_t width = (*version)->metadata().num_features;
  auto add = [](auto* tensors, const char* name, const char* datatype,
                std::vector<int64_t> shape) {
    auto* tensor = tensors->Add();
    tensor->set_name(name);
    tensor->set_datatype(datatype);
    for (int64_t dim : shape) tensor->add_shape(dim);
  };
  add(response.mutable_inputs(), kFeatures, "FP32", {-1, width});
  add(response.mutable_inputs(), kQueryOffsets, "INT64", {-1});
  add(response.mutable_outputs(), kScores, "FP32", {-1});
  add(response.mutable_outputs(), kScoresFp64, "FP64", {-1});
  add(response.mutable_outputs(), kRanks, "INT64", {-1});
  add(response.mutable_outputs(), kOrder, "INT64", {-1});
  finish(absl::OkStatus());
  return response;
}

absl::Status OpenInference::ModelInfer(const ModelInferRequest& request,
                                       InterruptCheck interrupted,
                                       absl::string_view protocol,
                                       ModelInferResponse* response) {
  RequestRecord record(metrics_, "ModelInfer", protocol);
  const std::shared_ptr<const ServingSnapshot> snapshot = manager_->snapshot();
  record.SetModel(request.model_name(),
                  snapshot->models.count(request.model_name()) > 0);
  std::shared_ptr<const ServableVersion> held;
  auto finish = [&](absl::Status status) {
    if (!status.ok()) response->Clear();
    return record.Done(status);
  };
  absl::StatusOr<VersionSelector> selector =
      InferenceSelector(request.model_name(), request.model_version());
  if (!selector.ok()) return finish(selector.status());
  auto version = snapshot->Resolve(*selector);
  if (!version.ok()) return finish(version.status());
  held = *version;
  record.SetVersion(held);
  const ForestScorer& scorer = held->scorer();
  const size_t width = static_cast<size_t>(scorer.num_features());

  int features_index = -1;
  int offsets_index = -1;
  for (int i = 0; i < request.inputs_size(); ++i) {
    const std::string& name = request.inputs(i).name();
    int* slot = name == kFeatures        ? &features_index
                : name == kQueryOffsets ? &offsets_index
                                         : nullptr;
    if (slot == nullptr) {
      return finish(absl::InvalidArgumentError(absl::StrCat(
          "unknown input '", name,
          "'; this model takes 'features' (FP32 [N, ", width,
          "]) and optionally 'query_offsets' (INT64)")));
    }
    if (*slot >= 0) {
      return finish(absl::InvalidArgumentError(
          absl::StrCat("input '", name, "' is given twice")));
    }
    *slot = i;
  }
  if (features_index < 0) {
    return finish(absl::InvalidArgumentError(absl::StrCat(
        "the request has no input 'features' (FP32 [N, ", width, "])")));
  }
  const auto& features = request.inputs(features_index);
  if (features.datatype() != "FP32") {
    return finish(absl::InvalidArgumentError(absl::StrCat(
        "input 'features' must be FP32, got '", features.datatype(), "'")));
  }
  if (absl::Status shape = CheckShape(features, 2); !shape.ok()) {
    return finish(shape);
  }
  if (static_cast<size_t>(features.shape(1)) != width) {
    return finish(absl::InvalidArgumentError(absl::StrCat(
        "input 'features' has ", features.shape(1),
        " columns; model ", held->model(), " version ", held->version(),
        " takes ", width, " features")));
  }
  const size_t num_docs = static_cast<size_t>(features.shape(0));
  record.SetDocuments(num_docs);
  // Bound the element count before multiplying it into byte sizes.
  if (num_docs > limits_.max_batch_documents &&
      num_docs > limits_.max_documents_per_request) {
    return finish(absl::ResourceExhaustedError(absl::StrCat(
        num_docs, " rows in one ModelInfer request; this server accepts at "
                  "most ",
        std::max<uint64_t>(limits_.max_batch_documents,
                           limits_.max_documents_per_request),
        " (split the request)")));
  }
  absl::StatusOr<TensorView<float>> rows = Elements<float>(
      request, features_index, features.contents().fp32_contents(),
      num_docs * width);
  if (!rows.ok()) return finish(rows.status());
  absl::StatusOr<std::vector<size_t>> bounds =
      QueryBoundaries(request, offsets_index, num_docs);
  if (!bounds.ok()) return finish(bounds.status());
  const size_t num_queries = bounds->size() - 1;
  if (num_docs == 0) {
    return finish(absl::InvalidArgumentError(
        "input 'features' has no rows (the request has no documents)"));
  }
  if (offsets_index >= 0) {
    if (absl::Status counts = CheckBatchCounts(num_queries, num_docs, limits_,
                                               "ModelInfer", "rows");
        !counts.ok()) {
      return finish(counts);
    }
  }
  for (size_t q = 0; q < num_queries; ++q) {
    absl::Status count =
        CheckDocumentCount((*bounds)[q + 1] - (*bounds)[q], limits_);
    if (!count.ok()) {
      return finish(absl::Status(
          count.code(), num_queries == 1
                            ? std::string(count.message())
                            : absl::StrCat("query ", q, ": ", count.message())));
    }
  }
  for (size_t i = 0; i < num_docs * width; ++i) {
    if (std::isinf(rows->data[i])) {
      return finish(absl::InvalidArgumentError(absl::StrCat(
          "input 'features' row ", i / width, " column ", i % width,
          " is infinite (NaN means missing; infinities are refused)")));
    }
  }
  absl::StatusOr<std::vector<std::string>> outputs = RequestedOutputs(request);
  if (!outputs.ok()) return finish(outputs.status());

  std::vector<double> scores(num_docs);
  for (size_t begin = 0; begin < num_docs; begin += kChunkDocs) {
    if (absl::Status status = interrupted(); !status.ok()) {
      return finish(status);
    }
    const size_t count = std::min(kChunkDocs, num_docs - begin);
    scorer.Score(absl::MakeConstSpan(rows->data + begin * width,
                                     count * width),
                 count, absl::MakeSpan(scores.data() + begin, count));
  }
  std::vector<int64_t> order(num_docs);
  std::vector<int64_t> ranks(num_docs);
  std::iota(order.begin(), order.end(), int64_t{0});
  for (size_t q = 0; q < num_queries; ++q) {
    auto first = order.begin() + static_cast<ptrdiff_t>((*bounds)[q]);
    auto last = order.begin() + static_cast<ptrdiff_t>((*bounds)[q + 1]);
    std::sort(first, last, [&scores](int64_t a, int64_t b) {
      return RanksBefore(scores[a], 0, static_cast<uint32_t>(a), scores[b], 0,
                         static_cast<uint32_t>(b));
    });
    for (auto it = first; it != last; ++it) {
      ranks[*it] = (it - first) + 1;
    }
  }

  response->set_model_name(held->model());
  response->set_model_version(absl::StrCat(held->version()));
  response->set_id(request.id());
  const bool raw = request.raw_input_contents_size() > 0;
  const int64_t n = static_cast<int64_t>(num_docs);
  for (const std::string& name : *outputs) {
    auto* tensor = response->add_outputs();
    tensor->set_name(name);
    tensor->add_shape(n);
    if (name == kScores) {
      tensor->set_datatype("FP32");
      std::vector<float> narrow(scores.begin(), scores.end());
      if (raw) {
        AppendRaw(narrow, response);
      } else {
        tensor->mutable_contents()->mutable_fp32_contents()->Add(
            narrow.begin(), narrow.end());
      }
    } else if (name == kScoresFp64) {
      tensor->set_datatype("FP64");
      if (raw) {
        AppendRaw(scores, response);
      } else {
        tensor->mutable_contents()->mutable_fp64_contents()->Add(
            scores.begin(), scores.end());
      }
    } else {
      const std::vector<int64_t>& values = name == kRanks ? ranks : order;
      tensor->set_datatype("INT64");
      if (raw) {
        AppendRaw(values, response);
      } else {
        tensor->mutable_contents()->mutable_int64_contents()->Add(
            values.begin(), values.end());
      }
    }
  }
  return finish(absl::OkStatus());
}

}  // namespace plrank::server
