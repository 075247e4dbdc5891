import Foundation
import IdentityToolkitAPI
import Logging
import Utilities

/// What a backend of its own (no fleet) does with the records its calls make: appends them to
/// its journal, when it has one (`--state`), in one `write(2)` per call before the answer goes
/// out; drops what expired every 4096 records; and rewrites the journal once it holds twice the
/// state's records, so the file follows the state rather than its history.
///
/// A value the ``IdentityToolkit`` actor holds beside its ``BackendCore``: the actor's one order is
/// the journal's order, so keeping is synchronous and needs no task of its own. A fleet's node
/// keeps its records with ``FleetLedger`` instead.
struct LocalLedger {
    /// Where records are written (`nil`: memory only).
    private(set) var journal: BackendJournal?
    /// Lines in the journal, and how many it had when last looked at.
    private var lines: Int
    private var linesAtCheck: Int
    private var recordsSincePurge = 0

    /// Records kept between two purges of what expired.
    static let purgeEvery = 4096

    init(journal: BackendJournal?) {
        self.journal = journal
        lines = journal?.lines ?? 0
        linesAtCheck = lines
    }

    /// Keeps `records`, which `state` already holds. A journal that cannot take them (a full
    /// disk, a read-only folder) leaves `state` as the journal has it (read back) and throws 503
    /// `UNAVAILABLE`: the call answers it, and nothing that was not written is believed.
    mutating func keep(_ records: [BackendRecord], state: inout BackendState, now: Date, configuration: BackendConfiguration,
                       logger: Logger) throws(IdentityToolkitError) {
        if let journal {
            do throws(IdentityToolkitError) { try journal.append(records) } catch {
                logger.error("the journal could not be written; answering 503 UNAVAILABLE", metadata: ["error": "\(error.message)"])
                do throws(IdentityToolkitError) {
                    state = try BackendJournal.replay(journal.directory)
                } catch {
                    logger.critical("the journal cannot be read back either; this backend's memory is ahead of its journal",
                                    metadata: ["error": "\(error.message)"])
                }
                // What Google's front end answers when its storage fails: the client retries later;
                // the path and the system's reason are the log's, not a stranger's.
                throw IdentityToolkitError.unavailable()
            }
            lines += records.count
        }
        recordsSincePurge += records.count
        if recordsSincePurge >= Self.purgeEvery {
            recordsSincePurge = 0
            Self.purge(&state, now: now, configuration: configuration)
        }
        if let journal, lines - linesAtCheck >= configuration.journalCompactionLines {
            // The journal twice the state (or more): rewrite it with the state's records. A state
            // whose records are all live is not rewritten for nothing. A failure keeps the old
            // file, still whole.
            state.purge(now: now, configuration: configuration)
            if lines >= 2 * state.recordCountEstimate {
                do {
                    let rewritten = try journal.compacted(state.records)
                    self.journal = rewritten
                    lines = rewritten.lines
                } catch {
                    logger.error("the journal could not be rewritten; it keeps growing", metadata: ["error": "\(error.message)"])
                }
            }
            linesAtCheck = lines
        }
    }

    /// Drops what has expired as of `now` (``BackendState/purge(now:configuration:)``) and hands
    /// what that and the sign-ins since freed back to the system (100,000 sign-ins, 1,000 at
    /// once: peak resident 294-323 MB without, 272-280 MB with).
    static func purge(_ state: inout BackendState, now: Date, configuration: BackendConfiguration) {
        state.purge(now: now, configuration: configuration)
        releaseFreeMemory()
    }
}
