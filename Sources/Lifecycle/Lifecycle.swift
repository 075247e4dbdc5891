import Logging
import ServiceLifecycle
import Synchronization

/// A part that is already running (a receiver, a gateway, the backend, the inspector, a world's
/// devices), as a service of one `ServiceGroup`: it runs until the group shuts down gracefully,
/// then stops.
package struct StartedPart: Service, CustomStringConvertible {
    package let description: String
    private let stop: @Sendable () async throws -> Void

    /// - Parameters:
    ///   - name: what the part is, for the group's log.
    ///   - stop: how it stops (it answers what is in flight first).
    package init(_ name: String, stop: @escaping @Sendable () async throws -> Void) {
        description = name
        self.stop = stop
    }

    package func run() async throws {
        // Cancelled rather than shut down (a part failed): stop all the same.
        try? await gracefulShutdown()
        try await stop()
    }

    /// Stops the part now, outside any group (a start that failed half-way).
    func stopNow() async throws { try await stop() }
}

/// The parts of a start in progress, noted as each comes up, so that a start that fails half-way
/// stops what it already started: see ``startingParts(_:)``.
package final class StartingParts: Sendable {
    private let parts = Mutex<[StartedPart]>([])

    init() {}

    /// Notes `value`, a part that has just started, and returns it; `stop` stops it.
    package func started<Value: Sendable>(_ value: Value, as name: String, stop: @escaping @Sendable (Value) async throws -> Void) -> Value {
        parts.withLock { $0.append(StartedPart(name) { try await stop(value) }) }
        return value
    }

    /// The parts noted so far, in the order they started.
    package var all: [StartedPart] { parts.withLock { $0 } }
}

/// Runs `start`, which starts parts one after another and notes each (``StartingParts/started(_:as:stop:)``).
/// If it throws, the parts it had started stop, the last started first, each even when another
/// fails to stop, and then its error is thrown: a failed start leaves nothing running.
package func startingParts<Result>(_ start: (StartingParts) async throws -> Result) async throws -> Result {
    let starting = StartingParts()
    do {
        return try await start(starting)
    } catch {
        for part in starting.all.reversed() { try? await part.stopNow() }
        throw error
    }
}

/// Runs a server command's parts until SIGINT or SIGTERM, then stops them, each after the parts
/// listed after it: list each part after the parts it depends on (the receiver before the backend
/// that pushes through it, the backend before the inspector that reads it), and they stop in the
/// reverse of that order. A part that fails to stop stops the rest all the same, and its error is
/// thrown.
package func runUntilSignalled(_ parts: [StartedPart], logger: Logger) async throws {
    try await serviceGroup(parts, stopsOnSignals: true, logger: logger).run()
}

/// `parts` as one group (shut down gracefully on SIGINT and SIGTERM if `stopsOnSignals`): a part
/// that ends (stopped, or failed to stop) shuts the group down gracefully, so the others stop in
/// order all the same.
private func serviceGroup(_ parts: [StartedPart], stopsOnSignals: Bool, logger: Logger) -> ServiceGroup {
    let services = parts.map {
        ServiceGroupConfiguration.ServiceConfiguration(service: $0, successTerminationBehavior: .gracefullyShutdownGroup,
                                                       failureTerminationBehavior: .gracefullyShutdownGroup)
    }
    return ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: stopsOnSignals ? [.sigterm, .sigint] : [], logger: logger))
}

/// Parts started one after another, run as one `ServiceGroup` with no signals of their own (a
/// world in a test or a scenario): ``shutdown()`` stops them in the reverse of the order they were
/// given, each after the parts listed after it.
package final class PartGroup: Sendable {
    private let group: ServiceGroup
    private let running: Task<Void, any Error>

    package init(_ parts: [StartedPart], logger: Logger = Logger(label: "authsim.parts", factory: { _ in SwiftLogNoOpLogHandler() })) {
        let group = serviceGroup(parts, stopsOnSignals: false, logger: logger)
        self.group = group
        running = Task { try await group.run() }
    }

    /// Stops every part, the last given first, and returns when all have stopped.
    /// - Throws: the first error a part's stop threw (the others stop all the same).
    package func shutdown() async throws {
        await group.triggerGracefulShutdown()
        try await running.value
    }
}
