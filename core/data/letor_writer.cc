#include "core/data/letor_writer.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/data/file_io.h"

namespace plrank {
namespace {

// Enough for any float's shortest form, an index and the separators.
constexpr size_t kMaxEntryChars = 64;

char* AppendInt(char* p, int64_t value) {
  return std::to_chars(p, p + 24, value).ptr;
}

char* AppendFloat(char* p, float value) {
  if (std::isnan(value)) {
    std::memcpy(p, "nan", 3);
    return p + 3;
  }
  return std::to_chars(p, p + 48, value).ptr;
}

}  // namespace

absl::Status AppendLetorText(const Dataset& data, std::string* out) {
  const size_t num_documents = data.num_documents();
  const size_t num_queries = data.num_queries();
  if (data.features.size() !=
      static_cast<size_t>(data.num_features) * num_documents) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "dataset has %d feature values, expected %d features x %d documents",
        data.features.size(), data.num_features, num_documents));
  }
  if (num_queries == 0 || data.query_offsets.back() != num_documents) {
    return absl::InvalidArgumentError(
        "dataset query offsets do not cover its documents");
  }
  const size_t line_capacity =
      64 + kMaxEntryChars * static_cast<size_t>(data.num_features);
  for (size_t query = 0; query < num_queries; ++query) {
    const std::string id = query < data.query_ids.size() &&
                                   !data.query_ids[query].empty()
                               ? data.query_ids[query]
                               : absl::StrCat(query);
    for (size_t doc = data.query_begin(query); doc < data.query_end(query);
         ++doc) {
      const size_t start = out->size();
      out->resize(start + line_capacity + id.size());
      char* p = out->data() + start;
      p = AppendInt(p, data.labels[doc]);
      std::memcpy(p, " qid:", 5);
      p += 5;
      std::memcpy(p, id.data(), id.size());
      p += id.size();
      for (int32_t f = 0; f < data.num_features; ++f) {
        const float value = data.value(doc, f);
        if (std::isinf(value)) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "feature %d of document %d is infinite", f + 1, doc));
        }
        *p++ = ' ';
        p = AppendInt(p, f + 1);
        *p++ = ':';
        p = AppendFloat(p, value);
      }
      *p++ = '\n';
      out->resize(p - out->data());
    }
  }
  return absl::OkStatus();
}

absl::Status WriteLetorFile(const Dataset& data, const std::string& path) {
  std::string text;
  if (absl::Status status = AppendLetorText(data, &text); !status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", status.message()));
  }
  return WriteFileAtomically(path, text);
}

}  // namespace plrank
