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

/// `parts` as one group with no signals of its own: a part that ends (stopped, or failed to stop)
/// shuts the group down gracefully, so the others stop in order all the same.
private func serviceGroup(_ parts: [StartedPart], logger: Logger) -> ServiceGroup {
    let services = parts.map {
        ServiceGroupConfiguration.ServiceConfiguration(service: $0, successTerminationBehavior: .gracefullyShutdownGroup,
                                                       failureTerminationBehavior: .gracefullyShutdownGroup)
    }
    return ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [], logger: logger))
}

/// Runs a program's parts as one `ServiceGroup`, running from the start: `start` starts them one
/// after another, each after the parts it depends on, and adds each to the group as it comes up
/// (``ProgramParts/add(_:)``; a Hummingbird server joins through `ServerHosting.group`). They run
/// until SIGINT or SIGTERM, or until one of them fails, then stop in the reverse of the order they
/// were added. A start that fails stops what it had added, then its error is thrown; a signal
/// during the start stops it the same way.
package func runProgram(logger: Logger, _ start: @Sendable @escaping (ProgramParts) async throws -> Void) async throws {
    // A group with no service ends at once: this one holds it open until it shuts down.
    let group = ServiceGroup(configuration: .init(
        services: [.init(service: HoldsOpen(), successTerminationBehavior: .gracefullyShutdownGroup,
                         failureTerminationBehavior: .gracefullyShutdownGroup)],
        gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    let parts = ProgramParts(group: group)
    let (startError, groupError) = await withTaskGroup(of: ProgramEnd.self) { tasks in
        tasks.addTask {
            do { try await group.run() } catch { return .group(error) }
            return .group(nil)
        }
        tasks.addTask {
            do { try await start(parts) } catch { return .start(error) }
            return .start(nil)
        }
        var startError: (any Error)?
        var groupError: (any Error)?
        var groupEnded = false
        for await end in tasks {
            switch end {
            case .start(let error?):
                // A start cut short by a signal (the group ended cleanly) is no failure of its own;
                // one whose server failed to listen says which port, better than the group's error.
                if !(groupEnded && groupError == nil) { startError = error }
                await group.triggerGracefulShutdown()
            case .start(nil):
                break
            case .group(let error):
                groupEnded = true
                groupError = error
                tasks.cancelAll()
            }
        }
        return (startError, groupError)
    }
    // The start's error says which port or store; the group's, which part failed to run or stop.
    if let startError { throw startError }
    if let groupError { throw groupError }
}

/// How a program's start or its group ended.
private enum ProgramEnd: Sendable {
    case start((any Error)?)
    case group((any Error)?)
}

/// What a program's start adds its parts to (``runProgram(logger:_:)``).
package final class ProgramParts: Sendable {
    /// The program's group: a server started with `ServerHosting.group(parts.group)` runs in it.
    package let group: ServiceGroup

    init(group: ServiceGroup) { self.group = group }

    /// Adds a part that has just started; the group stops it, after the parts added after it.
    package func add(_ part: StartedPart) async {
        await group.addServiceUnlessShutdown(.init(service: part, successTerminationBehavior: .gracefullyShutdownGroup,
                                                   failureTerminationBehavior: .gracefullyShutdownGroup))
    }
}

/// Holds a program's group open until it shuts down.
private struct HoldsOpen: Service {
    func run() async throws { try? await gracefulShutdown() }
}

/// Parts started one after another, run as one `ServiceGroup` with no signals of their own (a
/// world in a test or a scenario): ``shutdown()`` stops them in the reverse of the order they were
/// given, each after the parts listed after it.
package final class PartGroup: Sendable {
    private let group: ServiceGroup
    private let running: Task<Void, any Error>

    package init(_ parts: [StartedPart], logger: Logger = Logger(label: "authsim.parts", factory: { _ in SwiftLogNoOpLogHandler() })) {
        let group = serviceGroup(parts, logger: logger)
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
