import Foundation
import Hummingbird
import HummingbirdCore
import IdentityToolkitAPI
import Logging
import NIOCore
import HTTPServerSupport

/// The local backend on HTTP: Identity Toolkit JSON with emulator-style paths, on Hummingbird.
///
/// | path | what |
/// |---|---|
/// | `/www.googleapis.com/identitytoolkit/v3/relyingparty/verifyClient` | app credential: receipt, suggestedTimeout; sends the silent push |
/// | `…/v3/relyingparty/sendVerificationCode`, `/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode` | a code by SMS |
/// | `…/v3/relyingparty/verifyPhoneNumber`, `…/v1/accounts:signInWithPhoneNumber` | sign in with the code |
/// | `…/v3/relyingparty/verifyAssertion`, `…/v1/accounts:signInWithIdp` | Sign in with Apple |
/// | `…/v3/relyingparty/getProjectConfig` | the authorized domains |
/// | `/emulator/v1/projects/{project}/verificationCodes` | the SMS outbox |
/// | `/www.googleapis.com/robot/v1/metadata/jwk/securetoken@system.gserviceaccount.com` | the ID-token keys (JWKS) |
/// | `/__/auth/handler` | the reCAPTCHA page |
/// | `/appleid/auth/keys`, `/appleid/auth/authorize` | Apple's side of Sign in with Apple |
///
/// Every Identity Toolkit call needs the API key (`?key=` or `x-goog-api-key`); ``BackendRouter``
/// says which route takes what.
package final class BackendServer: Sendable {
    package let toolkit: IdentityToolkit
    private let server: RunningServer

    private init(toolkit: IdentityToolkit, server: RunningServer) {
        self.toolkit = toolkit
        self.server = server
    }

    package var host: String { server.host }
    package var port: Int { server.port }
    /// `host:port` as a client on this machine dials it (`FIREBASE_AUTH_EMULATOR_HOST`).
    package var dialAuthority: String { server.dialAuthority }
    /// `http://host:port`: what an app gives `auth.useEmulator(withHost:port:)`.
    package var baseURL: String { server.baseURL }

    /// Starts listening on `host:port` (0: any free port) and returns once it does.
    /// - Parameter logger: where the backend logs what a user debugging a run wants to see
    ///   (refused requests, silent pushes that failed); silent by default.
    /// - Parameter tls: a certificate chain and key (PEM) to answer HTTPS on the same port too:
    ///   the SDK opens the reCAPTCHA page at `https://<emulator host:port>/__/auth/handler` while
    ///   its API calls to the same host:port are plain HTTP. Without it the backend is HTTP only,
    ///   as the Firebase Auth Emulator is.
    /// - Parameter access: who may call the Admin and emulator routes (``AdminAccess``): anyone by
    ///   default, for a backend on loopback.
    /// - Parameter hosting: a group of its own (``shutdown()`` stops it), or a program's group.
    package static func start(toolkit: IdentityToolkit, host: String = "127.0.0.1", port: Int = 0,
                             tls: (certificateChainPEM: String, privateKeyPEM: String)? = nil, access: AdminAccess = .loopbackOnly,
                             hosting: ServerHosting = .ownGroup, logger: Logger = Logger(label: "authsim.backend", factory: { _ in SwiftLogNoOpLogHandler() }))
    async throws(ServerStartError) -> BackendServer {
        try access.check(listening: host, what: "the backend")
        let builder: HTTPServerBuilder
        do {
            builder = try tls.map { try HTTPServerBuilder.http1AndTLS(certificateChainPEM: $0.certificateChainPEM, privateKeyPEM: $0.privateKeyPEM) }
                ?? .http1OnEventLoops()
        } catch {
            throw ServerStartError(message: "the backend cannot use the TLS certificate or key: \(error)")
        }
        let server = try await RunningServer.start(router: BackendRouter.make(toolkit: toolkit, access: access), host: host, port: port,
                                                   name: "the backend", server: builder, hosting: hosting,
                                                   eventLoops: HandlerEventLoops.shared, logger: logger)
        return BackendServer(toolkit: toolkit, server: server)
    }

    /// Stops listening; requests in flight are answered first.
    package func shutdown() async { await server.shutdown() }
}
