#include "core/data/dataset_cache.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/data/content_hash.h"
#include "core/data/file_io.h"
#include "core/data/file_io_internal.h"

namespace plrank {

using file_io_internal::OsError;

namespace {

constexpr char kMagic[8] = {'P', 'L', 'R', 'K', 'D', 'S', 'C', '\1'};
constexpr uint32_t kFormatVersion = 1;
constexpr uint32_t kByteOrderMark = 0x01020304;

// Everything the header records, in file order after the magic.
struct Header {
  uint32_t version = kFormatVersion;
  uint32_t byte_order = kByteOrderMark;
  uint64_t source_size = 0;
  uint64_t source_checksum = 0;
  uint64_t query_file_checksum = 0;  // 0 = no group-size file
  uint64_t options_digest = 0;
  int64_t num_features = 0;
  uint64_t num_documents = 0;
  uint64_t num_queries = 0;
  uint64_t query_id_bytes = 0;
  uint64_t has_line_order = 0;
  int64_t lines = 0;
  int64_t missing_values = 0;
  int64_t duplicate_features = 0;
};
static_assert(sizeof(Header) == 104, "the header is written as raw bytes");
constexpr size_t kHeaderBytes = sizeof(kMagic) + sizeof(Header);

// The source as the cache must match it. Hashing reads the whole source,
// so ReadCache does it only once the cache's header is plausible for this
// source (right format, options and size): a missing or stale cache costs
// no extra read of the source.
struct Source {
  const std::string& path;
  const std::string& query_file;
  uint64_t options_digest = 0;
};

// (size, ContentHasher checksum) of a whole file, or of its bytes
// [begin, end) (end < 0: to the end), read in blocks.
absl::StatusOr<std::pair<uint64_t, uint64_t>> HashFile(const std::string& path,
                                                       int64_t begin = 0,
                                                       int64_t end = -1) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return OsError(path, "cannot open");
  if (begin > 0 && ::fseeko(file, static_cast<off_t>(begin), SEEK_SET) != 0) {
    std::fclose(file);
    return OsError(path, "cannot seek");
  }
  ContentHasher hasher;
  std::vector<char> block(size_t{8} << 20);
  uint64_t size = 0;
  const bool bounded = end >= 0;
  const uint64_t limit = bounded ? static_cast<uint64_t>(end - begin) : 0;
  while (true) {
    size_t want = block.size();
    if (bounded && limit - size < want) want = static_cast<size_t>(limit - size);
    const size_t got = want == 0 ? 0 : std::fread(block.data(), 1, want, file);
    hasher.Update(std::string_view(block.data(), got));
    size += got;
    if (got < block.size()) break;
  }
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) return OsError(path, "read failed");
  return std::make_pair(size, hasher.Finish());
}

// The options that change what a file parses to (not the messages).
uint64_t OptionsDigest(const ReadOptions& options) {
  return HashContent(absl::StrCat(
      "features=", options.num_features, " max_index=",
      options.max_feature_index,
      " duplicates=", static_cast<int>(options.duplicates),
      " noncontiguous=", options.allow_noncontiguous_queries,
      " explicit_query_file=", !options.query_file.empty(),
      // One rank's share of a big file is a dataset of its own.
      options.byte_begin != 0 || options.byte_end >= 0
          ? absl::StrCat(" bytes=", options.byte_begin, "-", options.byte_end)
          : std::string()));
}

absl::StatusOr<uint64_t> QueryFileChecksum(const std::string& query_file) {
  if (query_file.empty()) return 0;
  absl::StatusOr<std::pair<uint64_t, uint64_t>> hashed = HashFile(query_file);
  if (!hashed.ok()) return hashed.status();
  // Never 0, which means "no file".
  return hashed->second | 1;
}

// a * b + c with overflow detection.
bool MulAdd(uint64_t a, uint64_t b, uint64_t c, uint64_t* out) {
  uint64_t product;
  if (__builtin_mul_overflow(a, b, &product)) return false;
  return !__builtin_add_overflow(product, c, out);
}

// The exact size of a cache file with these counts; false on overflow.
bool ExpectedFileSize(const Header& h, uint64_t* size) {
  uint64_t total = kHeaderBytes + sizeof(uint64_t);  // header + trailer
  const uint64_t line_order = h.has_line_order ? h.num_documents : 0;
  uint64_t features;
  return MulAdd(h.num_documents, 4, total, &total) &&        // labels
         MulAdd(h.num_queries + 1, 4, total, &total) &&      // offsets
         MulAdd(h.num_queries, 4, total, &total) &&          // id lengths
         MulAdd(h.query_id_bytes, 1, total, &total) &&       // ids
         MulAdd(line_order, 4, total, &total) &&             // line order
         MulAdd(static_cast<uint64_t>(h.num_features), h.num_documents, 0,
                &features) &&
         MulAdd(features, 4, total, size);                   // features
}

template <typename T>
std::string_view Bytes(const std::vector<T>& values) {
  return std::string_view(reinterpret_cast<const char*>(values.data()),
                          values.size() * sizeof(T));
}

// Reads exactly `bytes` bytes into `out`, hashing them.
bool ReadInto(std::FILE* file, void* out, size_t bytes, ContentHasher* hasher) {
  if (bytes == 0) return true;
  if (std::fread(out, 1, bytes, file) != bytes) return false;
  hasher->Update(std::string_view(static_cast<const char*>(out), bytes));
  return true;
}

// Why the dataset read from a cache breaks an invariant, or "".
std::string CheckInvariants(const Dataset& data) {
  const size_t n = data.labels.size();
  if (data.query_offsets.front() != 0 || data.query_offsets.back() != n) {
    return "query offsets do not span the documents";
  }
  for (size_t q = 0; q + 1 < data.query_offsets.size(); ++q) {
    if (data.query_offsets[q] >= data.query_offsets[q + 1]) {
      return "query offsets are not increasing";
    }
  }
  for (int32_t label : data.labels) {
    if (label < 0 || label > kMaxLabel) return "a label is out of range";
  }
  if (!data.input_line_order.empty()) {
    std::vector<bool> seen(n, false);
    for (uint32_t line : data.input_line_order) {
      if (line >= n || seen[line]) return "the line order is not a permutation";
      seen[line] = true;
    }
  }
  return "";
}

// The cached dataset when `cache` holds one built from `now`; otherwise
// why not (a stale or damaged cache is not an error).
struct CacheRead {
  std::optional<CachedDataset> dataset;
  std::string why_not;
};

CacheRead ReadCache(const std::string& cache, const Source& source,
                    const ReadOptions& options) {
  CacheRead result;
  std::FILE* file = std::fopen(cache.c_str(), "rb");
  if (file == nullptr) {
    result.why_not = errno == ENOENT ? "no cache yet"
                                     : absl::StrCat("cannot open the cache: ",
                                                    std::strerror(errno));
    return result;
  }
  struct stat info;
  char magic[sizeof(kMagic)];
  Header h;
  ContentHasher hasher;
  auto fail = [&](std::string why) {
    std::fclose(file);
    result.why_not = std::move(why);
    return std::move(result);
  };
  if (::fstat(::fileno(file), &info) != 0 || !S_ISREG(info.st_mode)) {
    return fail("the cache is not a regular file");
  }
  if (!ReadInto(file, magic, sizeof(magic), &hasher) ||
      std::memcmp(magic, kMagic, sizeof(kMagic)) != 0 ||
      !ReadInto(file, &h, sizeof(h), &hasher) || h.version != kFormatVersion ||
      h.byte_order != kByteOrderMark) {
    return fail("the cache is not a PLRank dataset cache of this version");
  }
  if (h.options_digest != source.options_digest) {
    return fail("the cache was written with other reading options");
  }
  struct stat source_info;
  const bool ranged = options.byte_begin != 0 || options.byte_end >= 0;
  if (::stat(source.path.c_str(), &source_info) != 0 ||
      (ranged ? source_info.st_size < options.byte_end ||
                    static_cast<uint64_t>(options.byte_end -
                                          options.byte_begin) != h.source_size
              : static_cast<uint64_t>(source_info.st_size) != h.source_size)) {
    return fail("the source changed since the cache was written");
  }
  // A rank's share: only its bytes are hashed, never the whole file.
  absl::StatusOr<std::pair<uint64_t, uint64_t>> hashed =
      ranged ? HashFile(source.path, options.byte_begin, options.byte_end)
             : HashFile(source.path);
  absl::StatusOr<uint64_t> query_checksum = QueryFileChecksum(source.query_file);
  if (!hashed.ok() || !query_checksum.ok()) {
    // Left to the parser, which names the file that cannot be read.
    return fail("the source cannot be read");
  }
  if (hashed->first != h.source_size || hashed->second != h.source_checksum ||
      *query_checksum != h.query_file_checksum) {
    return fail("the source changed since the cache was written");
  }
  uint64_t expected_size;
  if (h.num_features < 0 || h.num_features > options.max_feature_index ||
      (options.num_features > 0 && h.num_features != options.num_features) ||
      h.num_documents > std::numeric_limits<uint32_t>::max() ||
      h.num_queries == 0 || h.num_queries > h.num_documents ||
      h.has_line_order > 1 || !ExpectedFileSize(h, &expected_size) ||
      expected_size != static_cast<uint64_t>(info.st_size)) {
    return fail("the cache's counts do not match its size (damaged)");
  }
  // Every count is now bounded by bytes the file really holds.
  Dataset data;
  data.num_features = static_cast<int32_t>(h.num_features);
  data.labels.resize(h.num_documents);
  data.query_offsets.resize(h.num_queries + 1);
  std::vector<uint32_t> id_lengths(h.num_queries);
  std::string ids(h.query_id_bytes, '\0');
  data.input_line_order.resize(h.has_line_order ? h.num_documents : 0);
  data.features.resize(static_cast<size_t>(h.num_features) * h.num_documents);
  uint64_t trailer = 0;
  if (!ReadInto(file, data.labels.data(), Bytes(data.labels).size(), &hasher) ||
      !ReadInto(file, data.query_offsets.data(),
                Bytes(data.query_offsets).size(), &hasher) ||
      !ReadInto(file, id_lengths.data(), Bytes(id_lengths).size(), &hasher) ||
      !ReadInto(file, ids.data(), ids.size(), &hasher) ||
      !ReadInto(file, data.input_line_order.data(),
                Bytes(data.input_line_order).size(), &hasher) ||
      !ReadInto(file, data.features.data(), Bytes(data.features).size(),
                &hasher) ||
      std::fread(&trailer, sizeof(trailer), 1, file) != 1) {
    return fail("the cache is shorter than its header says (damaged)");
  }
  std::fclose(file);
  if (trailer != hasher.Finish()) {
    result.why_not = "the cache's checksum does not match (damaged)";
    return result;
  }
  uint64_t id_total = 0;
  for (uint32_t length : id_lengths) id_total += length;
  if (id_total != h.query_id_bytes) {
    result.why_not = "the cache's query ids do not add up (damaged)";
    return result;
  }
  data.query_ids.reserve(h.num_queries);
  size_t at = 0;
  for (uint32_t length : id_lengths) {
    data.query_ids.emplace_back(ids, at, length);
    at += length;
  }
  if (std::string why = CheckInvariants(data); !why.empty()) {
    result.why_not = absl::StrCat("the cache is damaged: ", why);
    return result;
  }
  CachedDataset cached;
  cached.data = std::move(data);
  cached.stats.lines = h.lines;
  cached.stats.bytes = static_cast<int64_t>(h.source_size);
  cached.stats.missing_values = h.missing_values;
  cached.stats.duplicate_features = h.duplicate_features;
  cached.stats.source_checksum = h.source_checksum;
  cached.from_cache = true;
  result.dataset = std::move(cached);
  return result;
}

absl::Status WriteCache(const std::string& cache, const Dataset& data,
                        const ReadStats& stats, uint64_t query_file_checksum,
                        uint64_t options_digest) {
  Header h;
  h.source_size = static_cast<uint64_t>(stats.bytes);
  h.source_checksum = stats.source_checksum;
  h.query_file_checksum = query_file_checksum;
  h.options_digest = options_digest;
  h.num_features = data.num_features;
  h.num_documents = data.num_documents();
  h.num_queries = data.num_queries();
  std::vector<uint32_t> id_lengths;
  std::string ids;
  for (const std::string& id : data.query_ids) {
    id_lengths.push_back(static_cast<uint32_t>(id.size()));
    ids += id;
  }
  h.query_id_bytes = ids.size();
  h.has_line_order = data.input_line_order.empty() ? 0 : 1;
  h.lines = stats.lines;
  h.missing_values = stats.missing_values;
  h.duplicate_features = stats.duplicate_features;
  std::vector<std::string_view> pieces = {
      std::string_view(kMagic, sizeof(kMagic)),
      std::string_view(reinterpret_cast<const char*>(&h), sizeof(h)),
      Bytes(data.labels),
      Bytes(data.query_offsets),
      Bytes(id_lengths),
      ids,
      Bytes(data.input_line_order),
      Bytes(data.features)};
  ContentHasher hasher;
  for (std::string_view piece : pieces) hasher.Update(piece);
  const uint64_t trailer = hasher.Finish();
  pieces.emplace_back(reinterpret_cast<const char*>(&trailer),
                      sizeof(trailer));
  return WriteFileAtomically(cache, pieces);
}

}  // namespace

std::string DatasetCachePath(const std::string& source,
                             const std::string& cache_dir) {
  if (cache_dir.empty()) return source + ".plrank.bin";
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::absolute(source, error);
  const std::string key = error ? source : absolute.lexically_normal().string();
  return absl::StrFormat("%s/%s.%016x.plrank.bin", cache_dir,
                         std::filesystem::path(source).filename().string(),
                         HashContent(key));
}

absl::StatusOr<CachedDataset> ReadLetorFileCached(
    const std::string& source, const ReadOptions& options,
    const std::string& cache_dir) {
  std::string cache = DatasetCachePath(source, cache_dir);
  if (options.byte_begin != 0 || options.byte_end >= 0) {
    // One cache per share: <cache>.bytes-B-E.plrank.bin.
    cache = absl::StrCat(
        cache.substr(0, cache.size() - std::string_view(".plrank.bin").size()),
        ".bytes-", options.byte_begin, "-", options.byte_end, ".plrank.bin");
  }
  const std::string query_file = ResolveQueryFile(source, options);
  const uint64_t options_digest = OptionsDigest(options);
  CacheRead read =
      ReadCache(cache, Source{source, query_file, options_digest}, options);
  if (read.dataset.has_value()) {
    read.dataset->note = absl::StrCat("read ", cache);
    read.dataset->stats.query_file = query_file;
    return *std::move(read.dataset);
  }
  const std::string& why_parse = read.why_not;
  ReadOptions parse_options = options;
  parse_options.checksum_source = true;
  CachedDataset parsed;
  absl::StatusOr<Dataset> data =
      ReadLetorFile(source, parse_options, &parsed.stats);
  if (!data.ok()) return data.status();
  parsed.data = *std::move(data);
  // The text's checksum comes from the parse itself; the group file is
  // hashed right after it, as close to its use as this can get.
  absl::StatusOr<uint64_t> query_after = QueryFileChecksum(query_file);
  // A --dataset_cache_dir that does not exist yet is made (as mkdir -p):
  // a cache silently not written because of a missing directory was easy
  // to miss. Ranks making it at once all succeed.
  absl::Status written = query_after.status();
  if (written.ok() && !cache_dir.empty()) {
    std::error_code made;
    std::filesystem::create_directories(cache_dir, made);
    if (made) {
      written = absl::FailedPreconditionError(absl::StrCat(
          "cannot make the directory ", cache_dir, ": ", made.message()));
    }
  }
  if (written.ok()) {
    written = WriteCache(cache, parsed.data, parsed.stats, *query_after,
                         options_digest);
  }
  parsed.note =
      written.ok()
          ? absl::StrCat("wrote ", cache, why_parse.empty() ? "" : " (",
                         why_parse, why_parse.empty() ? "" : ")")
          : absl::StrCat("cannot write the dataset cache: ", written.message(),
                         "; went on without it");
  return parsed;
}

}  // namespace plrank
