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
        try replace([(file, Data(bytes))])
    }

    /// Replaces several files together: every one is written beside its target first, and only
    /// when all are written are they renamed over their targets. A full disk or a read-only
    /// folder leaves every target as it was (and no temporary file), so an export is the old one
    /// or the new one, never half of each.
    package static func replace(_ files: [(file: URL, bytes: Data)]) throws(FileStoreError) {
        var written: [(temporary: URL, file: URL)] = []
        func removeWritten() { for (temporary, _) in written { try? FileManager.default.removeItem(at: temporary) } }
        for (file, bytes) in files {
            let temporary = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).\(UUID().uuidString)")
            do {
                try create(temporary, with: bytes)
            } catch {
                removeWritten()
                throw error
            }
            written.append((temporary, file))
        }
        for (index, (temporary, file)) in written.enumerated() {
            guard rename(temporary.path, file.path) == 0 else {
                let reason = String(cString: strerror(errno))
                for (left, _) in written[index...] { try? FileManager.default.removeItem(at: left) }
                throw FileStoreError(.write, "cannot move \(temporary.lastPathComponent) over \(file.path): \(reason)")
            }
        }
    }

    /// `bytes` in a new file (0600), all of them or an error (and no file).
    private static func create(_ file: URL, with bytes: Data) throws(FileStoreError) {
        let fd = open(file.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw FileStoreError(.create, "cannot create \(file.path): \(String(cString: strerror(errno)))")
        }
        var failure = bytes.withUnsafeBytes { AppendOnlyFile.writeAll(fd, $0, sync: false) }
        if failure == nil, close(fd) != 0 { failure = String(cString: strerror(errno)) } else if failure != nil { close(fd) }
        if let failure {
            try? FileManager.default.removeItem(at: file)
            throw FileStoreError(.write, "cannot write \(file.path): \(failure)")
        }
    }
}
