import Foundation
import NIOSSL
import PostgresNIO

/// A `--store postgres://…` URL, read as libpq reads it:
///
/// - `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` over TCP (port 5432 by default);
/// - `postgres://USER@/DATABASE?host=/run/postgresql`: a Unix socket in that folder
///   (`.s.PGSQL.PORT`), as libpq takes a `host` that starts with a slash;
/// - `sslmode`: `disable`, `prefer` (TCP's default: TLS when the server offers it), `require`,
///   `verify-ca` (the certificate's chain, not its name) or `verify-full` (the chain and the name:
///   the URL's host name, or its IP address against the certificate's IP addresses). `prefer` and
///   `require` verify as `verify-full` does, which is stricter than libpq. TLS 1.2 or newer. A Unix
///   socket never uses TLS.
/// - `sslrootcert`: a PEM file of the CA certificates to trust instead of the system's roots (a
///   private database's CA), as libpq reads it.
/// - The password may also come from `PGPASSWORD`, so that it stays off the command line.
package struct PostgresLocation: Sendable {
    package let configuration: PostgresConnection.Configuration
    /// The URL without its password, for messages.
    package let address: String

    package init(_ text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(PostgresLocationError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme,
              ["postgres", "postgresql"].contains(scheme.lowercased()) else {
            throw PostgresLocationError("\(Self.redacted(text)) is not a postgres:// URL (postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE)")
        }
        guard let user = components.user.flatMap({ $0.removingPercentEncoding }), !user.isEmpty else {
            throw PostgresLocationError("\(Self.redacted(text)) names no user: postgres://USER@HOST/DATABASE")
        }
        let database = String(components.path.drop { $0 == "/" }).removingPercentEncoding ?? ""
        guard !database.isEmpty else {
            throw PostgresLocationError("\(Self.redacted(text)) names no database: postgres://USER@HOST/DATABASE")
        }
        let password = components.password.flatMap { $0.removingPercentEncoding } ?? environment["PGPASSWORD"]
        var query: [String: String] = [:]
        for item in components.queryItems ?? [] {
            guard ["host", "port", "sslmode", "sslrootcert"].contains(item.name) else {
                throw PostgresLocationError("\(Self.redacted(text)): \(item.name) is not a parameter authsim reads (host, port, sslmode, sslrootcert)")
            }
            query[item.name] = item.value ?? ""
        }
        let portText = query["port"] ?? components.port.map(String.init) ?? "5432"
        guard let port = Int(portText), (1...65535).contains(port) else {
            throw PostgresLocationError("\(Self.redacted(text)): port \(portText) is not a port number")
        }
        let host = query["host"] ?? components.host ?? ""
        let sslmode = query["sslmode"] ?? "prefer"
        if host.hasPrefix("/") {
            guard !["require", "verify-ca", "verify-full"].contains(sslmode), query["sslrootcert"] == nil else {
                throw PostgresLocationError("\(Self.redacted(text)): sslmode=\(sslmode) over a Unix socket: a socket carries no TLS")
            }
            configuration = PostgresConnection.Configuration(unixSocketPath: "\(host)/.s.PGSQL.\(port)", username: user, password: password,
                                                             database: database)
        } else {
            guard !host.isEmpty else {
                throw PostgresLocationError("\(Self.redacted(text)) names no host: postgres://USER@HOST/DATABASE, or ?host=/socket/folder")
            }
            let tls: PostgresConnection.Configuration.TLS
            switch sslmode {
            case "disable": tls = .disable
            case "prefer", "require", "verify-ca", "verify-full":
                var settings = TLSConfiguration.makeClientConfiguration()
                settings.minimumTLSVersion = .tlsv12
                if sslmode == "verify-ca" { settings.certificateVerification = .noHostnameVerification }
                if let file = query["sslrootcert"] {
                    let roots: [NIOSSLCertificate]
                    do { roots = try NIOSSLCertificate.fromPEMFile(file) } catch {
                        throw PostgresLocationError("\(Self.redacted(text)): sslrootcert \(file) is not a readable PEM file of CA certificates (\(error))")
                    }
                    guard !roots.isEmpty else { throw PostgresLocationError("\(Self.redacted(text)): sslrootcert \(file) holds no certificate") }
                    settings.trustRoots = .certificates(roots)
                }
                let context: NIOSSLContext
                do { context = try NIOSSLContext(configuration: settings) } catch {
                    throw PostgresLocationError("cannot set up TLS for \(Self.redacted(text)): \(error)")
                }
                tls = sslmode == "prefer" ? .prefer(context) : .require(context)
            default:
                throw PostgresLocationError("\(Self.redacted(text)): sslmode=\(sslmode) is not one of disable, prefer, require, verify-ca, verify-full")
            }
            configuration = PostgresConnection.Configuration(host: host, port: port, username: user, password: password, database: database, tls: tls)
        }
        address = Self.redacted(text)
    }

    /// The store a program was given: its `--store` option, else `AUTHSIM_STORE`; `nil` for neither.
    package static func given(_ option: String?, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(PostgresLocationError) -> PostgresLocation? {
        guard let text = option ?? environment["AUTHSIM_STORE"].flatMap({ $0.isEmpty ? nil : $0 }) else { return nil }
        return try PostgresLocation(text, environment: environment)
    }

    /// A node's name when `--node-name` gives none: the host name and the node's port (its process
    /// ID when the port is chosen by the system).
    package static func defaultNodeName(port: Int) -> String {
        "\(ProcessInfo.processInfo.hostName):\(port == 0 ? "pid\(ProcessInfo.processInfo.processIdentifier)" : String(port))"
    }

    /// `text` with its password, if any, replaced by `***`: by the URL's own parts when it parses,
    /// else whatever lies between `//user:` and the last `@` of the authority (a URL that does not
    /// parse is still shown without its password).
    package static func redacted(_ text: String) -> String {
        if let components = URLComponents(string: text) {
            guard components.password != nil else { return text }
            var safe = components
            safe.password = "***"
            return safe.string ?? "the store URL"
        }
        guard let start = text.range(of: "://") else { return text.contains("@") ? "the store URL" : text }
        let rest = text[start.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + ":***" + String(text[at...])
    }
}

package struct PostgresLocationError: Error, Sendable, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}
