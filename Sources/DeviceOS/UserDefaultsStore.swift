import Foundation
import Synchronization

/// A file-backed key-value store playing `UserDefaults`: what an app uses to keep the verification
/// ID across a restart.
package final class UserDefaultsStore: Sendable {
    package let file: URL?
    private let values: Mutex<[String: String]>

    /// In memory, or in `file` (JSON) so that a restarted app finds its values.
    package init(file: URL? = nil) {
        self.file = file
        var loaded: [String: String] = [:]
        if let file, let data = try? Data(contentsOf: file),
           let decoded = try? JSONDecoder().decode([String: String].self, from: data) {
            loaded = decoded
        }
        values = Mutex(loaded)
    }

    package func set(_ value: String?, forKey key: String) {
        let snapshot = values.withLock { values -> [String: String] in
            values[key] = value
            return values
        }
        guard let file else { return }
        try? FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? JSONEncoder().encode(snapshot).write(to: file, options: .atomic)
    }

    package func string(forKey key: String) -> String? { values.withLock { $0[key] } }
}
