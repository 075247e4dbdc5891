import Logging
import ServiceLifecycle

/// A part of a server command that is already running (a receiver, a gateway, the backend, the
/// inspector), as a service of the command's one `ServiceGroup`: it runs until the group shuts down
/// gracefully, then stops.
public struct StartedPart: Service, CustomStringConvertible {
    public let description: String
    private let stop: @Sendable () async throws -> Void

    /// - Parameters:
    ///   - name: what the part is, for the group's log.
    ///   - stop: how it stops (it answers what is in flight first).
    public init(_ name: String, stop: @escaping @Sendable () async throws -> Void) {
        description = name
        self.stop = stop
    }

    public func run() async throws {
        // Cancelled rather than shut down (a part failed): stop all the same.
        try? await gracefulShutdown()
        try await stop()
    }
}

/// Runs a server command's parts until SIGINT or SIGTERM, then stops them, each after the parts
/// listed after it: list each part after the parts it depends on (the receiver before the backend
/// that pushes through it, the backend before the inspector that reads it), and they stop in the
/// reverse of that order. A part that fails to stop stops the rest all the same, and its error is
/// thrown.
public func runUntilSignalled(_ parts: [StartedPart], logger: Logger) async throws {
    let services = parts.map {
        ServiceGroupConfiguration.ServiceConfiguration(service: $0, successTerminationBehavior: .gracefullyShutdownGroup,
                                                       failureTerminationBehavior: .gracefullyShutdownGroup)
    }
    let group = ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    try await group.run()
}
