#ifndef PLRANK_CORE_DATA_LETOR_WRITER_H_
#define PLRANK_CORE_DATA_LETOR_WRITER_H_

#include <string>

#include "absl/status/status.h"
#include "core/data/dataset.h"

namespace plrank {

// Appends `data` as LETOR text, one dense line per document:
//   <label> qid:<id> 1:<v> 2:<v> ... <F>:<v>
// Values use the shortest text that reads back to the same float; a missing
// value is written "nan". Query ids are those of `data` (the query's index
// when an id is empty or absent). Infinite values are refused because the
// reader refuses them. Reading the text back gives an identical Dataset.
absl::Status AppendLetorText(const Dataset& data, std::string* out);

// Writes AppendLetorText's output to `path` atomically (temporary file, then
// rename), so a reader never sees a half-written file.
absl::Status WriteLetorFile(const Dataset& data, const std::string& path);

}  // namespace plrank

#endif  // PLRANK_CORE_DATA_LETOR_WRITER_H_
