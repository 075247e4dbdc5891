import Foundation
import Utilities

/// Where running apps announce the URL schemes they own: one Unix socket per scheme
/// (`<scheme>.sock`, the scheme lowercased, as URL schemes are case-insensitive to the OS) and a
/// claim file beside it (`<scheme>.json`: scheme, bundle ID, process ID).
///
/// The directory is `$AUTHSIM_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/authsim`, else
/// `/tmp/authsim-<uid>`: the same for the app, the interceptor and the desktop entry that starts it.
package struct SchemeDirectory: Sendable, Hashable {
    package let url: URL

    package init(url: URL) { self.url = url }

    /// The directory this process would use, from its environment (``RuntimeDirectory``'s rule).
    package static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> SchemeDirectory {
        SchemeDirectory(url: RuntimeDirectory.standard(environment: environment).url)
    }

    /// The longest Unix socket path Linux accepts (`sun_path` is 108 bytes with its NUL).
    static let maximumSocketPath = RuntimeDirectory.maximumSocketPath

    package func socket(for scheme: String) throws(InterceptorError) -> URL {
        let socket = url.appendingPathComponent(scheme.lowercased() + ".sock")
        guard socket.path.utf8.count <= Self.maximumSocketPath else {
            throw InterceptorError(.pathTooLong, """
                the socket path \(socket.path) is \(socket.path.utf8.count) bytes; Unix sockets allow \(Self.maximumSocketPath): \
                use a shorter runtime directory (--runtime-dir or AUTHSIM_RUNTIME_DIR)
                """)
        }
        return socket
    }

    func claimFile(for scheme: String) -> URL { url.appendingPathComponent(scheme.lowercased() + ".json") }

    /// The claims found in the directory (live or stale: ``RedirectDispatcher/isAlive(_:)`` tells).
    package func claims() -> [SchemeClaim] {
        let files = (try? FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)) ?? []
        return files.filter { $0.pathExtension == "json" }.compactMap { file in
            (try? Data(contentsOf: file)).flatMap { try? JSONDecoder().decode(SchemeClaim.self, from: $0) }
        }.sorted { $0.scheme < $1.scheme }
    }

    /// Creates the directory (mode 0700) or checks the one there: it must be this user's and not
    /// writable by others, or another user could plant sockets that receive this user's redirects.
    func prepare() throws(InterceptorError) {
        if let problem = RuntimeDirectory(url: url).prepare() {
            throw InterceptorError(.fileError, "\(problem): refusing to claim schemes there")
        }
    }
}

/// A running app's claim on a scheme.
package struct SchemeClaim: Codable, Sendable, Hashable {
    package let scheme: String
    package let bundleID: String
    package let pid: Int32
}

/// URL scheme syntax (RFC 3986 §3.1).
package enum URLSchemeSyntax {
    package static func validate(_ scheme: String) throws(InterceptorError) {
        guard let first = scheme.unicodeScalars.first, first.isASCII, CharacterSet.letters.contains(first),
              scheme.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "+-.".unicodeScalars.contains($0)) })
        else {
            throw InterceptorError(.invalidScheme, "\"\(scheme)\" is not a URL scheme (a letter, then letters, digits, +, - or .)")
        }
    }

    /// The scheme of `text` (`app-1-…://…` → `app-1-…`), validated.
    package static func scheme(of text: String) throws(InterceptorError) -> String {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else {
            throw InterceptorError(.invalidURL, "\"\(text.prefix(80))\" is not a URL: it has no scheme")
        }
        let scheme = String(text[..<colon])
        try validate(scheme)
        return scheme
    }

    /// Edit distance, for "did you mean" on look-alike schemes.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.lowercased()), b = Array(b.lowercased())
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
