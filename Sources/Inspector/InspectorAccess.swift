import Foundation
import HTTPServerSupport
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import Utilities

/// The inspector behind a deployment's admin token (``AdminAccess``): every path but `/livez`,
/// `/readyz`, `/login` and the page's style sheet needs `Authorization: Bearer <token>` or the session cookie that
/// `POST /login` sets (HttpOnly, SameSite=Strict: another site's page cannot send it).
/// A browser without either gets the sign-in form; an API client a 401 that says how to give one.
enum InspectorAccess {
    static let openPaths: Set<String> = ["/livez", "/readyz", "/login", "/style.css"]

    static func add(to router: Router<BasicRequestContext>, access: AdminAccess) {
        guard let token = access.token else { return }
        router.add(middleware: AdminAccessMiddleware<BasicRequestContext>(access: access, guarded: { !openPaths.contains($0) }) { decision, request in
            if request.uri.path == "/" || request.headers[.accept]?.contains("text/html") == true {
                return SignInPage(status: .unauthorized, problem: nil)
            }
            let why = if case .refused(let reason) = decision { reason } else { "no credential" }
            return InspectorError(.unauthorized, "the inspector needs the deployment's admin token: send Authorization: Bearer <token>, or sign in at /login (\(why))",
                                  headers: [.wwwAuthenticate: #"Bearer realm="authsim""#])
        })
        router.get("/login") { _, _ in SignInPage(status: .ok, problem: nil) }
        router.post("/login") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 4_096)
            let given = URI.queryItems(in: String(buffer: body)).first { $0.name == "token" }?.value ?? ""
            guard token.matches(given) else {
                throw SignInPage(status: .unauthorized, problem: "That is not this deployment's admin token.")
            }
            return Response(status: .seeOther, headers: [
                .location: "/",
                .setCookie: "\(AdminAccessMiddleware<BasicRequestContext>.sessionCookieName)=\(token.session); Path=/; HttpOnly; SameSite=Strict",
                .cacheControl: "no-store",
            ])
        }
    }
}

/// The sign-in form, as a page (and as the error a browser without a session gets).
struct SignInPage: Error, HTTPResponseError, ResponseGenerator {
    let status: HTTPResponse.Status
    let problem: String?

    var html: String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>authsim inspector: sign in</title>
        <link rel="stylesheet" href="/style.css"></head>
        <body><main class="sign-in">
        <h1>authsim inspector</h1>
        <p>This deployment listens beyond loopback, so its inspector asks for the admin token it was started with
        (<code>--admin-token-file</code> or <code>AUTHSIM_ADMIN_TOKEN</code>).</p>
        \(problem.map { "<p class=\"problem\">\(WebText.escapeHTML($0))</p>" } ?? "")
        <form method="post" action="/login">
        <label>Admin token <input type="password" name="token" autocomplete="current-password" required autofocus></label>
        <button type="submit">Sign in</button>
        </form>
        </main></body></html>
        """
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                 body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}
