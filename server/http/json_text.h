#ifndef PLRANK_SERVER_HTTP_JSON_TEXT_H_
#define PLRANK_SERVER_HTTP_JSON_TEXT_H_

#include <string>

#include "nlohmann/json.hpp"

namespace plrank::server {

// Compact JSON text of `value`. Strings from requests (ids, model names) may
// hold invalid UTF-8: it is replaced instead of letting dump() throw.
inline std::string JsonText(const nlohmann::json& value) {
  return value.dump(-1, ' ', false,
                    nlohmann::json::error_handler_t::replace);
}

}  // namespace plrank::server

#endif  // PLRANK_SERVER_HTTP_JSON_TEXT_H_
