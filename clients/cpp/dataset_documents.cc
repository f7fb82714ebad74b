#include "clients/cpp/dataset_documents.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace plrank {

uint32_t InputLineOfDocument(const Dataset& data, size_t document) {
  return data.input_line_order.empty()
             ? static_cast<uint32_t>(document)
             : data.input_line_order[document];
}

void AppendQueryDocuments(
    const Dataset& data, size_t query,
    google::protobuf::RepeatedPtrField<v1::Document>* documents) {
  const uint32_t begin = data.query_begin(query);
  const uint32_t end = data.query_end(query);
  documents->Reserve(documents->size() + static_cast<int>(end - begin));
  for (uint32_t i = begin; i < end; ++i) {
    v1::Document* document = documents->Add();
    document->set_id(absl::StrCat(InputLineOfDocument(data, i)));
    auto* values = document->mutable_dense()->mutable_values();
    values->Resize(data.num_features, 0.0f);
    // Column-major storage: one strided gather per document.
    float* out = values->mutable_data();
    for (int32_t f = 0; f < data.num_features; ++f) out[f] = data.value(i, f);
  }
}

void FillLabelledQuery(const Dataset& data, size_t query,
                       v1::LabelledQuery* labelled) {
  labelled->set_query_id(data.query_ids[query]);
  AppendQueryDocuments(data, query, labelled->mutable_documents());
  const uint32_t begin = data.query_begin(query);
  const uint32_t end = data.query_end(query);
  labelled->mutable_labels()->Reserve(static_cast<int>(end - begin));
  for (uint32_t i = begin; i < end; ++i) labelled->add_labels(data.labels[i]);
}

void FillRankRequest(const Dataset& data, size_t query, v1::RankRequest* request) {
  request->set_query_id(data.query_ids[query]);
  AppendQueryDocuments(data, query, request->mutable_documents());
}

size_t EstimatedQueryBytes(const Dataset& data, size_t query) {
  const size_t documents = data.query_end(query) - data.query_begin(query);
  // 4 bytes per packed float, ~16 bytes of tags, lengths, id and label.
  return documents * (static_cast<size_t>(data.num_features) * 4 + 16) + 32;
}

}  // namespace plrank
