#include "server/tls_credentials.h"

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/data/file_io.h"

namespace plrank::server {
namespace {

// Certificate chains and keys are kilobytes; a bound keeps a wrong path
// (a device, a huge file) from filling memory.
constexpr size_t kMaxPemFileBytes = size_t{16} << 20;

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Free {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using Certificate = std::unique_ptr<X509, X509Free>;
using PrivateKey = std::unique_ptr<EVP_PKEY, KeyFree>;

absl::StatusOr<std::string> ReadTextFile(const std::string& path,
                                         const char* what) {
  absl::StatusOr<std::string> text = ReadWholeFile(path, kMaxPemFileBytes);
  if (!text.ok()) {
    return absl::Status(text.status().code(),
                        absl::StrCat(what, ": ", text.status().message()));
  }
  return text;
}

// OpenSSL's reason for the last failure (its error queue is then empty).
std::string OpensslReason() {
  const unsigned long error = ERR_peek_last_error();
  const char* reason = error == 0 ? nullptr : ERR_reason_error_string(error);
  std::string text =
      reason != nullptr ? std::string(reason) : absl::StrCat("error ", error);
  ERR_clear_error();
  return text;
}

// Every certificate of a PEM file, in order. A file without one, or with a
// block that does not parse, is an error naming the file.
absl::StatusOr<std::vector<Certificate>> ParseCertificates(
    const std::string& pem, const std::string& what) {
  ERR_clear_error();
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  std::vector<Certificate> certificates;
  while (true) {
    Certificate cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (cert == nullptr) break;
    certificates.push_back(std::move(cert));
  }
  const unsigned long error = ERR_peek_last_error();
  const bool clean_end = ERR_GET_LIB(error) == ERR_LIB_PEM &&
                         ERR_GET_REASON(error) == PEM_R_NO_START_LINE;
  if (certificates.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what,
                     ": no PEM certificate in it (expected a \"-----BEGIN "
                     "CERTIFICATE-----\" block; OpenSSL: ",
                     OpensslReason(), ")"));
  }
  if (!clean_end) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": certificate ", certificates.size() + 1,
        " in the file is malformed (OpenSSL: ", OpensslReason(), ")"));
  }
  ERR_clear_error();
  return certificates;
}

// Never prompts for a passphrase (OpenSSL's default would read the tty).
int NoPassphrase(char*, int, int, void*) { return 0; }

absl::StatusOr<PrivateKey> ParsePrivateKey(const std::string& pem,
                                           const std::string& what) {
  ERR_clear_error();
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  PrivateKey key(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, &NoPassphrase, nullptr));
  if (key == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        what,
        ": no usable PEM private key in it (an unencrypted \"-----BEGIN "
        "PRIVATE KEY-----\" block is needed; OpenSSL: ",
        OpensslReason(), ")"));
  }
  return key;
}

std::string TimeText(const ASN1_TIME* time) {
  Bio bio(BIO_new(BIO_s_mem()));
  ASN1_TIME_print(bio.get(), time);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

absl::Status CheckValidityPeriod(X509* cert, const std::string& what) {
  if (X509_cmp_current_time(X509_get0_notAfter(cert)) < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": the certificate expired on ",
                     TimeText(X509_get0_notAfter(cert))));
  }
  if (X509_cmp_current_time(X509_get0_notBefore(cert)) > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": the certificate is not valid before ",
                     TimeText(X509_get0_notBefore(cert))));
  }
  return absl::OkStatus();
}

// What gRPC would only report as a failed listen, said precisely.
absl::Status ValidateTlsPem(const TlsFiles& files, const std::string& cert_pem,
                            const std::string& key_pem,
                            const std::string& ca_pem) {
  const std::string cert_what = "TLS certificate " + files.cert_file;
  auto chain = ParseCertificates(cert_pem, cert_what);
  if (!chain.ok()) return chain.status();
  auto key = ParsePrivateKey(key_pem, "TLS key " + files.key_file);
  if (!key.ok()) return key.status();
  // The first certificate of the file is the server's own.
  X509* leaf = chain->front().get();
  if (X509_check_private_key(leaf, key->get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat(
        "TLS key ", files.key_file, " does not match the certificate ",
        files.cert_file, " (the certificate holds another public key)"));
  }
  if (absl::Status valid = CheckValidityPeriod(leaf, cert_what); !valid.ok()) {
    return valid;
  }
  if (!files.ca_file.empty()) {
    auto cas = ParseCertificates(ca_pem, "TLS CA " + files.ca_file);
    if (!cas.ok()) return cas.status();
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsFiles& files) {
  if (files.cert_file.empty() && files.key_file.empty()) {
    if (!files.ca_file.empty()) {
      return absl::InvalidArgumentError(
          "--tls_ca_file needs --tls_cert_file and --tls_key_file");
    }
    return grpc::InsecureServerCredentials();
  }
  if (files.cert_file.empty() || files.key_file.empty()) {
    return absl::InvalidArgumentError(
        "TLS needs both --tls_cert_file and --tls_key_file");
  }
  auto cert = ReadTextFile(files.cert_file, "TLS certificate");
  if (!cert.ok()) return cert.status();
  auto key = ReadTextFile(files.key_file, "TLS key");
  if (!key.ok()) return key.status();
  std::string ca;
  if (!files.ca_file.empty()) {
    auto read = ReadTextFile(files.ca_file, "TLS CA");
    if (!read.ok()) return read.status();
    ca = *std::move(read);
  }
  if (absl::Status valid = ValidateTlsPem(files, *cert, *key, ca);
      !valid.ok()) {
    return valid;
  }
  grpc::SslServerCredentialsOptions ssl(
      files.ca_file.empty()
          ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
          : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  ssl.pem_root_certs = ca;
  ssl.pem_key_cert_pairs.push_back({*key, *cert});
  return grpc::SslServerCredentials(ssl);
}

}  // namespace plrank::server
