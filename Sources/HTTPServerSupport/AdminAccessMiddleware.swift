import HTTPTypes
import Hummingbird
import NIOCore

/// A request context that knows its client's address (for ``AdminAccess``'s owner networks).
package protocol PeerAddressContext: RequestContext {
    var peer: SocketAddress? { get }
}

/// Holds a server's guarded routes to its ``AdminAccess``: a request to a path `guarded` says
/// needs it goes on only when ``AdminAccess/decide(authorization:cookie:peer:ownerAllowed:)``
/// allows it; otherwise `refuse` makes the server's own 401 (each server answers in its own shape).
/// The inspector's session cookie is ``sessionCookieName``.
package struct AdminAccessMiddleware<Context: RequestContext>: RouterMiddleware {
    package let access: AdminAccess
    let guarded: @Sendable (String) -> Bool
    let ownerAllowed: Bool
    let refuse: @Sendable (AdminAccess.Decision, Request) -> any Error

    /// The inspector's session cookie.
    package static var sessionCookieName: String { "authsim_session" }

    package init(access: AdminAccess, ownerAllowed: Bool = false, guarded: @escaping @Sendable (String) -> Bool = { _ in true },
                refuse: @escaping @Sendable (AdminAccess.Decision, Request) -> any Error) {
        self.access = access
        self.guarded = guarded
        self.ownerAllowed = ownerAllowed
        self.refuse = refuse
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard access.token != nil, guarded(request.uri.path) else { return try await next(request, context) }
        let decision = access.decide(authorization: request.headers[.authorization], cookie: Self.sessionCookie(in: request.headers),
                                     peer: (context as? any PeerAddressContext)?.peer, ownerAllowed: ownerAllowed)
        guard decision == .allowed else { throw refuse(decision, request) }
        return try await next(request, context)
    }

    /// The value of the session cookie among a request's `Cookie` headers.
    static func sessionCookie(in headers: HTTPFields) -> String? {
        for line in headers[values: .cookie] {
            for pair in line.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == sessionCookieName {
                    return parts[1].trimmingCharacters(in: .whitespaces)
                }
            }
        }
        return nil
    }
}
