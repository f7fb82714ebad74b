#ifndef PLRANK_SERVER_TLS_CREDENTIALS_H_
#define PLRANK_SERVER_TLS_CREDENTIALS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/security/server_credentials.h"

namespace plrank::server {

// The PEM files of --tls_cert_file, --tls_key_file and --tls_ca_file.
struct TlsFiles {
  std::string cert_file;  // with key_file: TLS
  std::string key_file;
  std::string ca_file;    // also: require and verify client certificates
};

// Insecure credentials when no file is given; TLS (mTLS with a CA) when
// they are. Every file is read and checked with OpenSSL first, so a bad one
// stops the server with what is wrong with it (INVALID_ARGUMENT, naming the
// file) instead of gRPC's bare "cannot listen": a file that holds no PEM
// certificate / unencrypted private key, a malformed certificate in a
// bundle, a key that is not the certificate's, a certificate outside its
// validity period. NOT_FOUND when a file cannot be read.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>>
MakeServerCredentials(const TlsFiles& files);

}  // namespace plrank::server

#endif  // PLRANK_SERVER_TLS_CREDENTIALS_H_
