import Foundation
import HTTPServerSupport
import Hummingbird
import Lifecycle
import Logging

/// The inspector listening: its page and API on one port.
package final class InspectorServer: Sendable {
    private let server: RunningServer
    private let sources: InspectorSources

    package var host: String { server.host }
    package var port: Int { server.port }
    package var baseURL: String { server.baseURL }

    private init(server: RunningServer, sources: InspectorSources) {
        self.server = server
        self.sources = sources
    }

    /// - Parameter access: who may use it (``AdminAccess``): anyone by default, on loopback only.
    package static func start(_ sources: InspectorSources, host: String = "127.0.0.1", port: Int = 4000, access: AdminAccess = .loopbackOnly,
                             hosting: ServerHosting = .ownGroup, logger: Logger = Logger(label: "authsim.inspector", factory: { _ in SwiftLogNoOpLogHandler() }))
    async throws(ServerStartError) -> InspectorServer {
        let router: Router<BasicRequestContext>
        try access.check(listening: host, what: "the inspector")
        do { router = try InspectorRouter.make(sources, access: access) } catch { throw ServerStartError(message: "the inspector cannot start: \(error.message)") }
        let server = try await RunningServer.start(router: router, host: host, port: port, name: "the inspector", hosting: hosting, logger: logger)
        return InspectorServer(server: server, sources: sources)
    }

    /// Ends the live streams, then stops listening.
    package func shutdown() async {
        sources.history.finishSubscribers()
        await server.shutdown()
    }
}

/// Its live streams end before its server stops: a group stops this part, added after the server, first.
extension InspectorServer: RunningPart {
    package var description: String { "the inspector's live streams" }
}
