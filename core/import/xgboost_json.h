#ifndef PLRANK_CORE_IMPORT_XGBOOST_JSON_H_
#define PLRANK_CORE_IMPORT_XGBOOST_JSON_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace plrank {

// The document type of XGBoost model files. Floats parse straight from their
// decimal text into float (XGBoost writes the shortest text that reads back
// as the same float; UBJSON holds them as float32), so thresholds and leaves
// are XGBoost's exact values; a detour through double could round twice.
using XgboostJson =
    nlohmann::basic_json<std::map, std::vector, std::string, bool, std::int64_t,
                         std::uint64_t, float>;

// Parses an XGBoost model file's bytes: JSON (save_model("m.json")) or
// Universal Binary JSON (save_model("m.ubj"), XGBoost's binary JSON), told
// apart by the bytes after
// the opening '{' (a UBJSON key starts with its length's type marker, a JSON
// key with '"'). Untrusted input: a document may hold no more values than it
// has bytes (a typed UBJSON array of nulls or booleans costs no byte per
// element, so a few bytes could otherwise claim 2^62 of them), containers
// nest at most 64 deep (the UBJSON reader recurses per level), and no
// exception escapes. Errors are InvalidArgument naming the format.
absl::StatusOr<XgboostJson> ParseXgboostDocument(const std::string& bytes);

}  // namespace plrank

#endif  // PLRANK_CORE_IMPORT_XGBOOST_JSON_H_
