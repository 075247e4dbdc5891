import Foundation
import Logging
import PostgresNIO
import Synchronization

/// A connection of its own that `LISTEN`s on one channel and hands each announcement's payload
/// on, reconnecting with a backoff (0.1 s doubling to 5 s) when it is lost. After each connect it
/// calls on with `nil`: announcements sent while it was away are lost, so the caller reads
/// whatever it follows again. Announcements only wake a reader; what they announce is read
/// from the tables.
final class PostgresListener: Sendable {
    private let location: PostgresLocation
    private let logger: Logger
    private let what: String
    /// The listening connection and its task, while following.
    private let listening = Mutex<(task: Task<Void, Never>?, connection: PostgresConnection?, closed: Bool)>((nil, nil, false))

    /// - Parameter what: what the announcements are about, for the log ("the device registry's announcements").
    init(location: PostgresLocation, what: String, logger: Logger) {
        self.location = location
        self.what = what
        self.logger = logger
    }

    /// Listens on `channel` until ``close()``: `heard` gets each payload, and `nil` after each connect.
    func start(channel: String, _ heard: @escaping @Sendable (String?) -> Void) {
        let (configuration, logger, address, what) = (location.configuration, logger, location.address, what)
        let task = Task { [self] in
            var backoff = 0.1
            while !Task.isCancelled {
                do {
                    let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: silentStoreLogger)
                    let closed = listening.withLock { state -> Bool in
                        if !state.closed { state.connection = connection }
                        return state.closed
                    }
                    if closed {
                        try? await connection.close()
                        return
                    }
                    try await connection.listen(on: channel) { notifications in
                        // Listening now: whatever was announced before (or while the connection was down) is read once.
                        backoff = 0.1
                        heard(nil)
                        for try await notification in notifications { heard(notification.payload) }
                    }
                    try? await connection.close()
                } catch {
                    if Task.isCancelled || listening.withLock({ $0.closed }) { return }
                    logger.warning("lost \(what); reconnecting",
                                   metadata: ["store": "\(address)", "error": "\(PostgresStoreFailure.describe(error))", "retry in s": "\(backoff)"])
                }
                // Reconnection backoff for a background listener; nothing waits on it.
                try? await Task.sleep(for: .seconds(backoff))
                backoff = min(backoff * 2, 5)
            }
        }
        let previous = listening.withLock { state -> Task<Void, Never>? in
            defer { state.task = task }
            return state.task
        }
        previous?.cancel()
    }

    func close() async {
        let (task, connection) = listening.withLock { state -> (Task<Void, Never>?, PostgresConnection?) in
            state.closed = true
            defer { (state.task, state.connection) = (nil, nil) }
            return (state.task, state.connection)
        }
        task?.cancel()
        if let connection { try? await connection.close() }
        await task?.value
    }
}
