import Foundation
import Testing

/// A size-limited tmpfs mounted on a new folder for one test: a real filesystem that fills up
/// (`ENOSPC`) and can be remounted read-only (`EROFS`), for the stores' disk-fault tests. Mounting
/// needs the privilege to (root with `CAP_SYS_ADMIN`, as on this project's machines); where it
/// is missing, ``mount(_:bytes:)`` says why and the test is skipped.
package final class SmallFilesystem: Sendable {
    package let folder: URL
    private let filler: URL

    private init(folder: URL) {
        self.folder = folder
        filler = folder.appendingPathComponent(".filler")
    }

    /// A tmpfs of `bytes` on a new folder, or `nil` (with a note printed) where one cannot be mounted.
    package static func mount(_ name: String, bytes: Int) async throws -> SmallFilesystem? {
        let folder = temporaryDirectory(name)
        let mounted = try await runProgram(["mount", "-t", "tmpfs", "-o", "size=\(bytes),mode=0700", "tmpfs", folder.path])
        guard mounted.status == 0 else {
            try? FileManager.default.removeItem(at: folder)
            print("skipping: cannot mount a \(bytes)-byte tmpfs here (mount exited \(mounted.status)); the disk-fault test needs root with CAP_SYS_ADMIN")
            return nil
        }
        return SmallFilesystem(folder: folder)
    }

    /// Fills the filesystem to its last byte with a file of its own (``free()`` removes it).
    package func fill() throws {
        FileManager.default.createFile(atPath: filler.path, contents: nil)
        let handle = try FileHandle(forWritingTo: filler)
        defer { try? handle.close() }
        let block = Data(repeating: 0x2e, count: 4096)
        do {
            while true { try handle.write(contentsOf: block) }
        } catch {
            // ENOSPC: full. A last partial block may still fit.
        }
        var small = Data(repeating: 0x2e, count: 1)
        while (try? handle.write(contentsOf: small)) != nil { small = Data(repeating: 0x2e, count: 1) }
    }

    /// Removes what ``fill()`` wrote.
    package func free() throws { try FileManager.default.removeItem(at: filler) }

    /// Remounts the filesystem read-only (`EROFS` on every write) or writable again.
    package func remount(readOnly: Bool) async throws {
        let result = try await runProgram(["mount", "-o", "remount,\(readOnly ? "ro" : "rw")", folder.path])
        try #require(result.status == 0, "remounting \(folder.path) \(readOnly ? "read-only" : "writable") failed")
    }

    /// Unmounts it (its files go with it) and removes the folder.
    package func unmount() async {
        _ = try? await runProgram(["umount", "-l", folder.path])
        try? FileManager.default.removeItem(at: folder)
    }
}
