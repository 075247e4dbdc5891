// OpenSSL's libcrypto, as Debian's libssl-dev installs it: what RS256 signing needs (EVP keys and
// signatures, errors) and its random generator (RAND_bytes). Its symbols are OpenSSL's own;
// swift-crypto's and swift-nio-ssl's BoringSSL are prefixed (CCryptoBoringSSL_…, CNIOBoringSSL_…),
// so both live in one process.
#include <openssl/evp.h>
#include <openssl/err.h>
#include <openssl/rsa.h>
#include <openssl/rand.h>
