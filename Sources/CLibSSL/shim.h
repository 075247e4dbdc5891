// OpenSSL's libssl, as Debian's libssl-dev installs it: the TLS client of the app side's
// transport (HTTPTransport/SocketTransport.swift), so that an app's build of FirebaseAuth
// compiles no TLS package. Its symbols are OpenSSL's own; swift-nio-ssl's BoringSSL is prefixed.
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
