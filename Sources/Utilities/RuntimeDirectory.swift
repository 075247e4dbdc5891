import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where this user's running programs put their Unix sockets: `$AUTHSIM_RUNTIME_DIR`, else
/// `$XDG_RUNTIME_DIR/authsim`, else `/tmp/authsim-<uid>`. Short, so socket paths stay under
/// Linux's 107 bytes whatever the folders the programs work in; the user's alone (mode 0700).
package struct RuntimeDirectory: Sendable, Hashable {
    package let url: URL

    package init(url: URL) { self.url = url }

    /// The directory this process would use, from its environment.
    package static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> RuntimeDirectory {
        if let explicit = environment["AUTHSIM_RUNTIME_DIR"], !explicit.isEmpty {
            return RuntimeDirectory(url: URL(fileURLWithPath: explicit))
        }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return RuntimeDirectory(url: URL(fileURLWithPath: runtime).appendingPathComponent("authsim"))
        }
        return RuntimeDirectory(url: URL(fileURLWithPath: "/tmp/authsim-\(getuid())"))
    }

    /// The longest Unix socket path Linux accepts (`sun_path` is 108 bytes with its NUL).
    package static let maximumSocketPath = 107

    /// Creates the directory (mode 0700) or checks the one there: it must be this user's and not
    /// writable by others, or another user could plant sockets that receive this user's requests.
    /// - Returns: why not, or nil when the directory is fit.
    package func prepare() -> String? {
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            return "cannot create the runtime directory \(url.path): \(error.localizedDescription)"
        }
        var info = stat()
        guard lstat(url.path, &info) == 0 else { return "cannot stat the runtime directory \(url.path): errno \(errno)" }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { return "the runtime directory \(url.path) is not a directory (a symbolic link?)" }
        guard info.st_uid == getuid() else {
            return "the runtime directory \(url.path) belongs to uid \(info.st_uid), not to this user (\(getuid()))"
        }
        guard info.st_mode & 0o022 == 0 else {
            return "the runtime directory \(url.path) is writable by other users (mode \(String(info.st_mode & 0o777, radix: 8))): chmod go-w it"
        }
        return nil
    }
}
