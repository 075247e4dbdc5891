import Foundation
import IdentityToolkitAPI

/// The backend's readings of files a user hands it or a crash leaves, run as a start runs them but
/// without a server or an actor: the fuzz targets' seam (`authsim-fuzz`), so that hostile bytes
/// go through exactly the code a start does. Each returns the error a start would stop with.
package enum HostileFiles {
    /// A state folder's journal, as a start replays it: its stamp, every record, the purge, and
    /// the records written back as a rewrite writes them.
    package static func replayJournal(in directory: URL) throws(IdentityToolkitError) {
        var state = try BackendJournal.replay(directory)
        state.purge(now: Date(timeIntervalSince1970: 1_800_000_000), configuration: BackendConfiguration())
        for record in state.records { _ = try BackendJournal.text(record) }
    }

    /// A core with no users (made once: its signer's keys are the process's).
    private static let emptyCore = try? BackendCore(configuration: BackendConfiguration())

    /// An export folder, as `--import` reads it (``EmulatorExport/read(_:)``: the metadata and its
    /// stamp, the emulator's config and authsim's, the accounts), each applied by the rules the
    /// import's calls run, on a core of its own.
    package static func importExport(_ directory: URL) throws(IdentityToolkitError) {
        guard let contents = try EmulatorExport.read(directory) else { return }
        guard var core = emptyCore else { throw IdentityToolkitError(.internal, "no core to import into") }
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        for (_, config) in contents.configs {
            _ = try core.handle(now: now) { call throws(IdentityToolkitError) in try call.updateProjectConfig(config) }.answer.get()
        }
        for (_, batch) in contents.batches {
            _ = try core.handle(now: now) { call throws(IdentityToolkitError) in try call.adminBatchCreate(batch) }.answer.get()
        }
    }
}
