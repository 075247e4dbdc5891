import Logging
import ServiceLifecycle

/// A long-running part: a receiver, a server's streams, an APNs client's connections, a store, a
/// feed. It starts before it joins a group (its ports bound, its files open), so that the parts
/// started after it can use it; in the group it runs as a `Service` until the group shuts down
/// gracefully, or is cancelled because another part failed, and then stops, answering what is in
/// flight first. A part says how it stops; ``run()`` is the same for every part.
package protocol RunningPart: Service, CustomStringConvertible {
    /// Stops the part; what is in flight is answered first. Stopping it again does nothing.
    func shutdown() async throws
}

extension RunningPart {
    /// Runs until the group shuts down (or is cancelled, a part failed), then stops the part.
    package func run() async throws {
        try? await gracefulShutdown()
        try await shutdown()
    }
}

/// A step of a group's stop that is no part of its own (a program's export on exit, its goodbye;
/// a client from a module that knows no groups): it runs where it was added, in reverse order.
package struct ShutdownStep: RunningPart {
    package let description: String
    private let step: @Sendable () async throws -> Void

    /// - Parameters:
    ///   - name: what it stops, for the group's log.
    ///   - step: what it does when the group stops.
    package init(_ name: String, _ step: @escaping @Sendable () async throws -> Void) {
        description = name
        self.step = step
    }

    package func shutdown() async throws { try await step() }
}

/// Parts that run and stop together as one `ServiceGroup`: a program's (which SIGINT and SIGTERM
/// stop), a world's, a test's, a lone server's. Each part is added as it starts, after the parts it
/// depends on (a Hummingbird server joins through `ServerHosting.group`). The
/// group stops them in the reverse of that order, every one even when another fails to stop; a
/// part that ends on its own (a server that failed) stops the others the same way.
///
/// ```swift
/// let parts = PartGroup()
/// do {
///     let receiver = try await PushReceiver.start(configuration)
///     await parts.add(receiver)
///     let backend = try await BackendServer.start(toolkit: toolkit, hosting: .group(parts))
/// } catch {
///     try? await parts.shutdown()   // a start that failed half-way leaves nothing running
///     throw error
/// }
/// ```
package final class PartGroup: Sendable {
    /// The group the parts run in.
    fileprivate let serviceGroup: ServiceGroup
    private let running: Task<Void, any Error>

    /// A group that runs from now until ``shutdown()``, or until a part ends.
    /// - Parameters:
    ///   - stopsOnSignals: SIGINT and SIGTERM stop it (a program's group).
    ///   - logger: the group's log of its parts starting and stopping (silent by default).
    package init(stopsOnSignals: Bool = false,
                 logger: Logger = Logger(label: "authsim.parts", factory: { _ in SwiftLogNoOpLogHandler() })) {
        // A group with no service ends at once: this one holds it open until it shuts down.
        let group = ServiceGroup(configuration: .init(
            services: [PartGroup.configuration(HoldsOpen())],
            gracefulShutdownSignals: stopsOnSignals ? [.sigterm, .sigint] : [], logger: logger))
        serviceGroup = group
        running = Task { try await group.run() }
    }

    /// Adds a part that has just started: the group stops it before the parts added before it.
    /// A group already stopping stops nothing it is given then; a part added late is the caller's.
    package func add(_ part: some Service) async {
        await serviceGroup.addServiceUnlessShutdown(PartGroup.configuration(part))
    }

    /// Stops every part, the last added first, and returns when all have stopped.
    /// - Throws: the first error a part's stop threw (the others stop all the same).
    package func shutdown() async throws {
        await serviceGroup.triggerGracefulShutdown()
        try await running.value
    }

    /// Returns when the group has stopped (a signal, ``shutdown()``, or a part that ended).
    /// - Throws: the first error a part threw.
    package func stopped() async throws { try await running.value }

    /// A part's end, whether it stopped or failed, shuts the group down gracefully, so that the
    /// others stop in order all the same.
    private static func configuration(_ part: some Service) -> ServiceGroupConfiguration.ServiceConfiguration {
        .init(service: part, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup)
    }
}

/// Holds a group open until it shuts down.
private struct HoldsOpen: Service {
    func run() async throws { try? await gracefulShutdown() }
}

/// Runs a program's parts in one ``PartGroup`` that SIGINT and SIGTERM stop: `start` starts them
/// one after another, each after the parts it depends on, adding each to the group as it comes up.
/// They run until a signal or until one of them fails, then stop in the reverse of the order they
/// were added. A start that fails stops what it had added, then its error is thrown; a signal
/// during the start stops it the same way.
package func runProgram(logger: Logger, _ start: @Sendable @escaping (PartGroup) async throws -> Void) async throws {
    let parts = PartGroup(stopsOnSignals: true, logger: logger)
    let (startError, groupError) = await withTaskGroup(of: ProgramEnd.self) { tasks in
        tasks.addTask {
            do { try await parts.stopped() } catch { return .group(error) }
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
                await parts.serviceGroup.triggerGracefulShutdown()
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
