#include "core/data/letor_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/data/content_hash.h"
#include "core/data/dense_budget.h"
#include "core/data/file_io.h"
#include "core/data/letor_tokens.h"
#include "core/data/line_chunk_reader.h"
#include "core/data/query_file.h"

namespace plrank {
namespace {

using letor_internal::IndexResult;
using letor_internal::IsSpace;
using letor_internal::kMaxFeatureIndex;
using letor_internal::kMaxLabel;
using letor_internal::LabelResult;
using letor_internal::ParseFeatureIndex;
using letor_internal::ParseFloatFast;
using letor_internal::ParseLabel;
using letor_internal::ParseValue;
using letor_internal::SkipSpaces;
using letor_internal::TokenEnd;
using letor_internal::ValueResult;

// Longest slice of a bad token quoted back in a message.
constexpr size_t kMaxQuoted = 40;

// absl here is built with its own string_view, distinct from std's.
absl::string_view Quote(const char* begin, const char* end) {
  const size_t length = static_cast<size_t>(end - begin);
  return absl::string_view(begin, length < kMaxQuoted ? length : kMaxQuoted);
}

// Parses text, chunk by chunk of whole lines, into compact rows (flat
// vectors, so no allocation per line), then scatters them into the columnar
// Dataset. A row whose indices run consecutively (dense LETOR text: 1, 2,
// 3, ...) stores its values and its first index only, 4 bytes per entry;
// other rows store an index per entry too. The text itself is never held
// whole, so loading peaks near twice the dense matrix (rows + columns)
// instead of text + rows + columns.
class LetorParser {
 public:
  // `size_hint`: the text's size in bytes when known (else -1), to reserve
  // the rows once instead of regrowing them (reserving costs address space,
  // not memory).
  LetorParser(const std::string& name, const ReadOptions& options,
              int64_t size_hint)
      : name_(name), options_(options) {
    // A LETOR entry takes at least ~4 bytes ("1:0 "); MSLR-like text is
    // closer to 10.
    if (size_hint > 0) values_.reserve(static_cast<size_t>(size_hint / 8));
  }

  // Parses whole lines (a chunk ends at a line break or the end of input).
  absl::Status ParseText(std::string_view text);
  absl::StatusOr<Dataset> Assemble(const std::string& query_file,
                                   bool query_file_explicit);
  void FillStats(int64_t bytes, ReadStats* stats) const;

 private:
  enum class Mode { kUnknown, kQid, kNoQid };

  template <typename... Args>
  absl::Status LineError(int64_t line, const absl::FormatSpec<Args...>& format,
                         const Args&... args) const {
    return absl::InvalidArgumentError(
        absl::StrCat(name_, ":", line, ": ", absl::StrFormat(format, args...)));
  }

  absl::Status ParseLine(const char* p, const char* end, int64_t line);
  absl::Status StartDocument(bool has_qid, std::string_view qid, int64_t line);
  absl::Status ParseEntrySlowly(const char* p, const char* end, int64_t line,
                                const char** next);
  absl::Status AddEntry(int64_t index, float value, int64_t line);
  void FinishRow(int32_t label);
  absl::StatusOr<std::vector<uint32_t>> QueryOffsetsFromQids(
      std::vector<uint32_t>* positions) const;

  // row_first_feature_ of a row that stores an index per entry.
  static constexpr uint32_t kIndexedRow = 0xFFFFFFFFu;

  const std::string& name_;
  const ReadOptions& options_;

  // Row r holds values [row_ends_[r - 1], row_ends_[r]). Its features are
  // row_first_feature_[r] + 0, 1, ... (0-based) or, when that is
  // kIndexedRow, the next entries of indices_ (rows in order).
  std::vector<int32_t> labels_;
  std::vector<uint64_t> row_ends_;
  std::vector<uint32_t> row_first_feature_;
  std::vector<float> values_;
  std::vector<uint32_t> indices_;  // 0-based features of indexed rows
  // The row being parsed: its first feature, the next one a consecutive run
  // expects, its entry count and (once the run breaks) its indices.
  uint32_t line_first_feature_ = 0;
  uint32_t line_next_feature_ = 0;
  uint64_t line_entries_ = 0;
  bool line_consecutive_ = true;
  std::vector<uint32_t> line_indices_;
  int64_t max_index_ = 0;          // largest 1-based index seen
  int64_t max_index_line_ = 0;     // where it was first seen
  // last_row_with_index_[i] == current row + 1 when index i already occurred
  // on this line: duplicate detection in O(1) without clearing per line.
  std::vector<uint32_t> last_row_with_index_;

  Mode mode_ = Mode::kUnknown;
  int64_t first_document_line_ = 0;
  // qid form: query of each row, and per query its id and line span.
  std::vector<uint32_t> row_query_;
  std::vector<std::string> query_ids_;
  std::vector<int64_t> query_first_line_;
  std::vector<int64_t> query_last_line_;
  absl::flat_hash_map<std::string, uint32_t> query_index_;
  bool queries_interleaved_ = false;

  int64_t lines_ = 0;
  int64_t missing_values_ = 0;
  int64_t duplicate_features_ = 0;
};

absl::Status LetorParser::ParseText(std::string_view text) {
  const char* p = text.data();
  const char* const end = p + text.size();
  while (p < end) {
    ++lines_;
    const char* newline =
        static_cast<const char*>(std::memchr(p, '\n', end - p));
    const char* line_end = newline != nullptr ? newline : end;
    const char* next = newline != nullptr ? newline + 1 : end;
    // A UTF-8 byte order mark (files saved by some editors) is not data.
    if (lines_ == 1 && line_end - p >= 3 &&
        std::memcmp(p, "\xEF\xBB\xBF", 3) == 0) {
      p += 3;
    }
    // Lone carriage returns (classic Mac line ends) would turn a whole file
    // into one line read as one document; a CR before the newline (CRLF)
    // is only trailing space.
    if (const void* cr = std::memchr(p, '\r', line_end - p)) {
      const char* after = static_cast<const char*>(cr) + 1;
      if (SkipSpaces(after, line_end) != line_end) {
        return LineError(lines_,
                         "carriage return inside the line (lone-CR line "
                         "ends?); use LF or CRLF line ends, e.g. tr '\\r' "
                         "'\\n'");
      }
    }
    if (const void* hash = std::memchr(p, '#', line_end - p)) {
      line_end = static_cast<const char*>(hash);
    }
    if (absl::Status status = ParseLine(p, line_end, lines_); !status.ok()) {
      return status;
    }
    p = next;
  }
  return absl::OkStatus();
}

absl::Status LetorParser::ParseLine(const char* p, const char* end,
                                    int64_t line) {
  p = SkipSpaces(p, end);
  if (p == end) return absl::OkStatus();  // blank or comment-only
  const char* token_end = TokenEnd(p, end);
  int32_t label = 0;
  switch (ParseLabel(p, token_end, &label)) {
    case LabelResult::kOk:
      break;
    case LabelResult::kNotInteger:
      return LineError(line, "label '%s' is not an integer",
                       Quote(p, token_end));
    case LabelResult::kOutOfRange:
      return LineError(line, "label '%s' outside 0..%d", Quote(p, token_end),
                       kMaxLabel);
    case LabelResult::kNotNumber:
      return LineError(line, "bad label '%s'; expected an integer 0..%d",
                       Quote(p, token_end), kMaxLabel);
  }
  p = SkipSpaces(token_end, end);
  std::string_view qid;
  const bool has_qid = end - p >= 4 && std::memcmp(p, "qid:", 4) == 0;
  if (has_qid) {
    token_end = TokenEnd(p, end);
    qid = std::string_view(p + 4, token_end - (p + 4));
    if (qid.empty()) return LineError(line, "empty qid");
    p = SkipSpaces(token_end, end);
  }
  if (absl::Status status = StartDocument(has_qid, qid, line); !status.ok()) {
    return status;
  }
  line_consecutive_ = true;
  line_first_feature_ = 0;
  line_next_feature_ = 0;
  line_entries_ = 0;
  line_indices_.clear();
  while (p < end) {
    // Fast path: "<digits>:<float>" followed by a space or the line end.
    const char* q = p;
    int64_t index = 0;
    while (q < end && static_cast<unsigned char>(*q - '0') <= 9 &&
           index <= kMaxFeatureIndex) {
      index = index * 10 + (*q - '0');
      ++q;
    }
    if (q > p && q < end && *q == ':' && index >= 1 &&
        index <= kMaxFeatureIndex) {
      float value;
      const char* ptr = ParseFloatFast(q + 1, end, &value);
      if (ptr == nullptr) {
        auto [parsed_end, ec] = std::from_chars(q + 1, end, value);
        if (ec == std::errc() && std::isfinite(value)) ptr = parsed_end;
      }
      if (ptr != nullptr && (ptr == end || IsSpace(*ptr))) {
        if (absl::Status status = AddEntry(index, value, line); !status.ok()) {
          return status;
        }
        p = SkipSpaces(ptr, end);
        continue;
      }
    }
    const char* next = nullptr;
    if (absl::Status status = ParseEntrySlowly(p, end, line, &next);
        !status.ok()) {
      return status;
    }
    p = SkipSpaces(next, end);
  }
  FinishRow(label);
  return absl::OkStatus();
}

void LetorParser::FinishRow(int32_t label) {
  labels_.push_back(label);
  row_ends_.push_back(values_.size());
  if (line_consecutive_) {
    row_first_feature_.push_back(line_first_feature_);
  } else {
    row_first_feature_.push_back(kIndexedRow);
    indices_.insert(indices_.end(), line_indices_.begin(),
                    line_indices_.end());
  }
}

absl::Status LetorParser::StartDocument(bool has_qid, std::string_view qid,
                                        int64_t line) {
  if (mode_ == Mode::kUnknown) {
    mode_ = has_qid ? Mode::kQid : Mode::kNoQid;
    first_document_line_ = line;
  } else if ((mode_ == Mode::kQid) != has_qid) {
    // Two calls, not one with a conditional format: absl checks format
    // strings at compile time, and clang only accepts constant ones.
    if (has_qid) {
      return LineError(line,
                       "line has a qid but the first document (line %d) has "
                       "none; do not mix the two forms",
                       first_document_line_);
    }
    return LineError(line,
                     "line has no qid but the first document (line %d) has "
                     "one; do not mix the two forms",
                     first_document_line_);
  }
  if (!has_qid) return absl::OkStatus();
  uint32_t query;
  if (!row_query_.empty() && query_ids_[row_query_.back()] == qid) {
    query = row_query_.back();
  } else if (auto it = query_index_.find(absl::string_view(qid.data(), qid.size()));
             it != query_index_.end()) {
    query = it->second;
    if (!options_.allow_noncontiguous_queries) {
      return LineError(
          line,
          "query '%s' appears again, but its lines %s:%d..%d are separated "
          "from this one by other queries; group each query's lines together "
          "or pass --allow_noncontiguous_queries to regroup them",
          Quote(qid.data(), qid.data() + qid.size()), name_,
          query_first_line_[query], query_last_line_[query]);
    }
    queries_interleaved_ = true;
  } else {
    query = static_cast<uint32_t>(query_ids_.size());
    query_index_.emplace(std::string(qid), query);
    query_ids_.emplace_back(qid);
    query_first_line_.push_back(line);
    query_last_line_.push_back(line);
  }
  query_last_line_[query] = line;
  row_query_.push_back(query);
  return absl::OkStatus();
}

absl::Status LetorParser::AddEntry(int64_t index, float value, int64_t line) {
  if (options_.num_features > 0 && index > options_.num_features) {
    if (!options_.num_features_origin.empty()) {
      return LineError(line, "feature index %d above %d, %s", index,
                       options_.num_features, options_.num_features_origin);
    }
    return LineError(line, "feature index %d above --num_features=%d", index,
                     options_.num_features);
  }
  if (options_.num_features == 0 && index > options_.max_feature_index) {
    return LineError(line,
                     "feature index %d above --max_feature_index=%d (raise "
                     "it, or give --num_features, for data that wide)",
                     index, options_.max_feature_index);
  }
  const uint32_t row_stamp = static_cast<uint32_t>(labels_.size() + 1);
  if (static_cast<size_t>(index) >= last_row_with_index_.size()) {
    last_row_with_index_.resize(
        std::max<size_t>(index + 1, 2 * last_row_with_index_.size()));
  }
  if (last_row_with_index_[index] == row_stamp) {
    if (options_.duplicates == DuplicateFeaturePolicy::kError) {
      return LineError(line,
                       "feature %d repeated; pass --duplicate_features=last "
                       "to keep the last value",
                       index);
    }
    ++duplicate_features_;  // the later entry overwrites when scattered
  }
  last_row_with_index_[index] = row_stamp;
  if (index > max_index_) {
    max_index_ = index;
    max_index_line_ = line;
  }
  const uint32_t feature = static_cast<uint32_t>(index - 1);
  if (line_entries_++ == 0) {
    line_first_feature_ = feature;
  } else if (line_consecutive_ && feature != line_next_feature_) {
    // The run breaks: from here on the row keeps an index per entry.
    line_consecutive_ = false;
    for (uint32_t f = line_first_feature_; f < line_next_feature_; ++f) {
      line_indices_.push_back(f);
    }
  }
  if (!line_consecutive_) line_indices_.push_back(feature);
  line_next_feature_ = feature + 1;
  values_.push_back(value);
  return absl::OkStatus();
}

// Handles everything the fast path refuses: missing values, a leading '+',
// and every malformed entry, with a precise message.
absl::Status LetorParser::ParseEntrySlowly(const char* p, const char* end,
                                           int64_t line, const char** next) {
  const char* token_end = TokenEnd(p, end);
  *next = token_end;
  const char* colon =
      static_cast<const char*>(std::memchr(p, ':', token_end - p));
  if (colon == nullptr) {
    return LineError(line, "expected <index>:<value>, got '%s'",
                     Quote(p, token_end));
  }
  int64_t index = 0;
  switch (ParseFeatureIndex(p, colon, &index)) {
    case IndexResult::kOk:
      break;
    case IndexResult::kNotNumber:
      return LineError(line, "bad feature index '%s'", Quote(p, colon));
    case IndexResult::kNotPositive:
      return LineError(line,
                       "feature index %s is not positive; indices start at 1",
                       Quote(p, colon));
    case IndexResult::kTooLarge:
      return LineError(line, "feature index %s is too large (limit %d)",
                       Quote(p, colon), kMaxFeatureIndex);
  }
  float value = 0;
  switch (ParseValue(colon + 1, token_end, &value)) {
    case ValueResult::kOk:
      break;
    case ValueResult::kMissing:
      value = std::numeric_limits<float>::quiet_NaN();
      ++missing_values_;
      break;
    case ValueResult::kInfinite:
      return LineError(line,
                       "value '%s' of feature %d is infinite; write nan for a "
                       "missing value",
                       Quote(colon + 1, token_end), index);
    case ValueResult::kOverflow:
      return LineError(line, "value '%s' of feature %d is outside float range",
                       Quote(colon + 1, token_end), index);
    case ValueResult::kNotNumber:
      if (colon + 1 == token_end) {
        return LineError(line, "feature %d has no value", index);
      }
      return LineError(line, "bad value '%s' for feature %d",
                       Quote(colon + 1, token_end), index);
  }
  return AddEntry(index, value, line);
}

// Offsets of the qid form. When queries were interleaved (and allowed),
// `positions` receives each row's destination, grouping rows by query in
// first-seen order and keeping their relative order.
absl::StatusOr<std::vector<uint32_t>> LetorParser::QueryOffsetsFromQids(
    std::vector<uint32_t>* positions) const {
  const size_t num_queries = query_ids_.size();
  std::vector<uint32_t> offsets(num_queries + 1, 0);
  for (uint32_t query : row_query_) ++offsets[query + 1];
  for (size_t q = 0; q < num_queries; ++q) offsets[q + 1] += offsets[q];
  if (queries_interleaved_) {
    std::vector<uint32_t> cursor(offsets.begin(), offsets.end() - 1);
    positions->resize(row_query_.size());
    for (size_t row = 0; row < row_query_.size(); ++row) {
      (*positions)[row] = cursor[row_query_[row]]++;
    }
  }
  return offsets;
}

absl::StatusOr<Dataset> LetorParser::Assemble(const std::string& query_file,
                                              bool query_file_explicit) {
  const size_t num_documents = labels_.size();
  if (num_documents == 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: no documents (%d lines, all blank or comments)",
                        name_, lines_));
  }
  if (num_documents > std::numeric_limits<uint32_t>::max() - 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: too many documents (%d)", name_, num_documents));
  }
  Dataset data;
  std::vector<uint32_t> positions;  // empty = rows keep their order
  if (mode_ == Mode::kQid) {
    if (query_file_explicit) {
      return LineError(first_document_line_,
                       "lines carry qid: but query file %s was also given; "
                       "use one or the other",
                       query_file);
    }
    absl::StatusOr<std::vector<uint32_t>> offsets =
        QueryOffsetsFromQids(&positions);
    if (!offsets.ok()) return offsets.status();
    data.query_offsets = *std::move(offsets);
    data.query_ids.assign(query_ids_.begin(), query_ids_.end());
  } else {
    if (query_file.empty()) {
      return LineError(first_document_line_,
                       "lines carry no qid: and there is no group file giving "
                       "each query's document count, one per line (%s.query, "
                       "LightGBM's name, or %s.group, XGBoost's, beside the "
                       "data); write one, or add qid:<id> to every line",
                       name_, name_);
    }
    absl::StatusOr<std::string> group_text = ReadWholeFile(query_file);
    if (!group_text.ok()) return group_text.status();
    absl::StatusOr<GroupSizes> groups =
        ParseGroupSizes(*group_text, query_file);
    if (!groups.ok()) return groups.status();
    absl::StatusOr<std::vector<uint32_t>> offsets =
        GroupSizesToOffsets(*groups, num_documents, name_);
    if (!offsets.ok()) return offsets.status();
    data.query_offsets = *std::move(offsets);
    data.query_ids.reserve(data.query_offsets.size() - 1);
    for (size_t q = 0; q + 1 < data.query_offsets.size(); ++q) {
      data.query_ids.push_back(absl::StrCat(q));
    }
  }

  const int64_t width =
      options_.num_features > 0 ? options_.num_features : max_index_;
  data.num_features = static_cast<int32_t>(width);
  if (absl::Status fits = CheckDenseMatrixFits(
          static_cast<int64_t>(num_documents), width, AvailableMemoryBytes(),
          name_,
          options_.num_features > 0 && !options_.num_features_origin.empty()
              ? absl::StrFormat("the width, %d features, is %s",
                                options_.num_features,
                                options_.num_features_origin)
              : absl::StrFormat("the widest feature index, %d, is on line %d",
                                max_index_, max_index_line_));
      !fits.ok()) {
    return fits;
  }
  data.features.assign(static_cast<size_t>(width) * num_documents, 0.0f);
  data.labels.resize(num_documents);
  if (!positions.empty()) data.input_line_order.resize(num_documents);
  float* const features = data.features.data();
  uint64_t entry = 0;
  size_t indexed = 0;  // next entry of indices_
  for (size_t row = 0; row < num_documents; ++row) {
    const size_t position = positions.empty() ? row : positions[row];
    data.labels[position] = labels_[row];
    if (!positions.empty()) {
      data.input_line_order[position] = static_cast<uint32_t>(row);
    }
    const uint64_t row_end = row_ends_[row];
    const uint32_t first = row_first_feature_[row];
    if (first != kIndexedRow) {
      // Only a row with entries forms a pointer: with no features at all,
      // `features` is null and even an unused offset from it is undefined.
      if (entry < row_end) {
        float* column = features + first * num_documents + position;
        for (; entry < row_end; ++entry, column += num_documents) {
          *column = values_[entry];
        }
      }
    } else {
      // In order, so with --duplicate_features=last the later value wins.
      for (; entry < row_end; ++entry) {
        features[indices_[indexed++] * num_documents + position] =
            values_[entry];
      }
    }
  }
  return data;
}

void LetorParser::FillStats(int64_t bytes, ReadStats* stats) const {
  if (stats == nullptr) return;
  stats->lines = lines_;
  stats->bytes = bytes;
  stats->missing_values = missing_values_;
  stats->duplicate_features = duplicate_features_;
}

absl::Status CheckReadOptions(const std::string& name,
                              const ReadOptions& options) {
  if (options.num_features < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: --num_features=%d is negative", name, options.num_features));
  }
  if (options.max_feature_index < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: --max_feature_index=%d must be >= 1", name,
        options.max_feature_index));
  }
  return absl::OkStatus();
}

bool FileExists(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

}  // namespace

absl::StatusOr<Dataset> ParseLetor(std::string_view text,
                                   const std::string& name,
                                   const ReadOptions& options,
                                   ReadStats* stats) {
  if (absl::Status status = CheckReadOptions(name, options); !status.ok()) {
    return status;
  }
  LetorParser parser(name, options, static_cast<int64_t>(text.size()));
  if (absl::Status status = parser.ParseText(text); !status.ok()) {
    return status;
  }
  absl::StatusOr<Dataset> data =
      parser.Assemble(options.query_file, !options.query_file.empty());
  if (data.ok()) parser.FillStats(static_cast<int64_t>(text.size()), stats);
  return data;
}

std::string DuplicateFeaturesNote(const std::string& path,
                                  const ReadStats& stats) {
  if (stats.duplicate_features == 0) return "";
  return absl::StrFormat(
      "%s: %d repeated feature %s within a line; the last value of each was "
      "kept (--duplicate_features=last)",
      path, stats.duplicate_features,
      stats.duplicate_features == 1 ? "index" : "indices");
}

std::string ResolveQueryFile(const std::string& path,
                             const ReadOptions& options) {
  if (!options.query_file.empty()) return options.query_file;
  // LightGBM's <file>.query, else XGBoost's <file>.group (same content).
  for (const char* suffix : {".query", ".group"}) {
    if (FileExists(path + suffix)) return path + suffix;
  }
  return "";
}

absl::StatusOr<Dataset> ReadLetorFile(const std::string& path,
                                      const ReadOptions& options,
                                      ReadStats* stats) {
  if (absl::Status status = CheckReadOptions(path, options); !status.ok()) {
    return status;
  }
  const std::string query_file = ResolveQueryFile(path, options);
  const bool query_file_explicit = !options.query_file.empty();
  const bool ranged = options.byte_begin != 0 || options.byte_end >= 0;
  if (ranged && !query_file.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": a byte range of the file cannot be read with group-size "
        "file ", query_file, " (it counts documents from the file's start); "
        "split such data into one file per rank ({rank} in the path)"));
  }
  absl::StatusOr<LineChunkReader> reader =
      ranged ? LineChunkReader::OpenRange(path, options.read_chunk_bytes,
                                          options.byte_begin, options.byte_end)
             : LineChunkReader::Open(path, options.read_chunk_bytes);
  if (!reader.ok()) return reader.status();
  const std::string name =
      ranged ? absl::StrCat(path, " (bytes ", options.byte_begin, "-",
                            options.byte_end < 0 ? reader->file_size()
                                                 : options.byte_end,
                            ")")
             : path;
  LetorParser parser(name, options, reader->file_size());
  ContentHasher hasher;
  while (true) {
    absl::StatusOr<std::string_view> chunk = reader->Next();
    if (!chunk.ok()) return chunk.status();
    if (chunk->empty()) break;
    if (options.checksum_source) hasher.Update(*chunk);
    if (absl::Status status = parser.ParseText(*chunk); !status.ok()) {
      return status;
    }
  }
  absl::StatusOr<Dataset> data =
      parser.Assemble(query_file, query_file_explicit);
  if (data.ok() && stats != nullptr) {
    parser.FillStats(reader->bytes_read(), stats);
    if (options.checksum_source) stats->source_checksum = hasher.Finish();
    stats->query_file = query_file;
  }
  return data;
}

}  // namespace plrank
