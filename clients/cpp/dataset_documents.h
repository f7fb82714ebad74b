#ifndef PLRANK_CLIENTS_CPP_DATASET_DOCUMENTS_H_
#define PLRANK_CLIENTS_CPP_DATASET_DOCUMENTS_H_

#include <cstddef>
#include <cstdint>

#include "core/data/dataset.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "plrank/v1/ranker.pb.h"

namespace plrank {

// Converts LETOR dataset queries (columnar) to the wire's row-wise documents.
//
// Every document is dense with exactly data.num_features values (feature f at
// position f, NaN kept as NaN = missing). Its id is the 0-based index of its
// line among the input file's data lines (Dataset::input_line_order when the
// reader regrouped queries, the stored index otherwise), so a response can be
// mapped back to the file.

// The input-line id of stored document `document`.
uint32_t InputLineOfDocument(const Dataset& data, size_t document);

// Appends the documents of query `query` to `documents`.
void AppendQueryDocuments(const Dataset& data, size_t query,
                          google::protobuf::RepeatedPtrField<v1::Document>* documents);

// The documents and labels of query `query` as one LabelledQuery.
void FillLabelledQuery(const Dataset& data, size_t query,
                       v1::LabelledQuery* labelled);

// Documents [begin, end) of the dataset (one query) as a RankRequest body;
// model spec and top_k are left to the caller.
void FillRankRequest(const Dataset& data, size_t query, v1::RankRequest* request);

// Approximate serialized size of query `query` in bytes (dense floats plus
// per-document framing), used to keep messages under the transport's limit.
size_t EstimatedQueryBytes(const Dataset& data, size_t query);

}  // namespace plrank

#endif  // PLRANK_CLIENTS_CPP_DATASET_DOCUMENTS_H_
