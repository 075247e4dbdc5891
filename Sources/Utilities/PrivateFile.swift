import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Files readable only by their user, written whole: the bytes go to a hidden temporary file beside
/// the target (mode 0600), which is then renamed over it, so a reader sees the old file or the new
/// one and never half of either. The keychain, Auth Emulator exports and `authsim serve --ready-file`
/// are written so.
package enum PrivateFile {
    /// Replaces `file` (or creates it) with `bytes`. The folder must exist.
    /// - Throws: ``FileStoreError`` naming the file and the system's reason; no temporary file is left.
    package static func replace(_ file: URL, with bytes: some DataProtocol) throws(FileStoreError) {
        let temporary = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: temporary.path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]) else {
            throw FileStoreError(.create, "cannot create \(temporary.path): is the folder there and writable?")
        }
        guard rename(temporary.path, file.path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw FileStoreError(.write, "cannot move \(temporary.lastPathComponent) over \(file.path): \(reason)")
        }
    }
}
