#ifndef PLRANK_SERVER_LIFECYCLE_ECHOED_TEXT_H_
#define PLRANK_SERVER_LIFECYCLE_ECHOED_TEXT_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace plrank::server {

// A client string quoted back in an error (a model name, label, document
// or query id) keeps at most this many bytes: gRPC carries the message in
// a trailer, and a default client refuses metadata above 8 KiB, so an
// uncapped 8,200-character name turned NOT_FOUND into "received initial
// metadata size exceeds limit" (and a 1 MB name into a 1 MB trailer).
inline constexpr size_t kMaxEchoedBytes = 200;
// A whole error message sent to a client keeps at most this many bytes.
inline constexpr size_t kMaxErrorMessageBytes = 2048;

// `text` cut to `max_bytes` at a UTF-8 character boundary, followed by
// "..." and the original length when cut; `text` itself otherwise.
inline std::string TruncateForMessage(absl::string_view text,
                                      size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t cut = max_bytes;
  // Never end inside a multi-byte character (continuation bytes 10xxxxxx).
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  return std::string(text.substr(0, cut)) + "... (" +
         std::to_string(text.size()) + " bytes)";
}

// A client string as quoted in an error message (kMaxEchoedBytes).
inline std::string EchoedText(absl::string_view text) {
  return TruncateForMessage(text, kMaxEchoedBytes);
}

}  // namespace plrank::server

#endif  // PLRANK_SERVER_LIFECYCLE_ECHOED_TEXT_H_
