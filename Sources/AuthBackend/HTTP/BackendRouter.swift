import Foundation
import Utilities
import HTTPTypes
import Hummingbird
import HTTPServerSupport
import HummingbirdCore
import IdentityToolkitAPI
import NIOCore
import Synchronization

/// The backend's routes: every Identity Toolkit call of ``ToolkitCalls`` (under every path the SDK,
/// REST clients, the Admin SDKs and the Auth Emulator use for it), then the emulator's own, the
/// public keys, the reCAPTCHA page and Apple's side; errors render themselves in Google's envelope.
///
/// Middleware, outermost first: ``ErrorEnvelopeMiddleware`` (anything thrown becomes the
/// envelope: unknown paths 404, a known path with another method 405, bodies over the limit 413),
/// then on the Identity Toolkit routes ``APIKeyMiddleware``.
enum BackendRouter {
    /// Request bodies over this are refused with 413 (the SDK's largest body, an Apple identity
    /// token with its post body, is a few kilobytes).
    static let maximumBodyBytes = 1_000_000

    /// The page's own URL, without its query: `scheme://<the request's authority><path>` (the
    /// provider's answer links back to it, as the emulator's widget does with its location).
    static func pageURL(_ request: Request, scheme: String, path: String) -> URL {
        let authority = request.head.authority ?? request.headers[.init("host")!] ?? "localhost"
        return URL(string: "\(scheme)://\(authority)\(path)") ?? URL(string: "\(scheme)://localhost\(path)")!
    }

    static func make(toolkit: IdentityToolkit, access: AdminAccess = .loopbackOnly) -> Router<BackendRequestContext> {
        let router = Router(context: BackendRequestContext.self)
        let routes = RouteMethods()
        router.add(middleware: MetricsMiddleware(metrics: toolkit.requestMetrics))
        router.add(middleware: ErrorEnvelopeMiddleware(routes: routes))
        // The Admin routes and the emulator's own: the deployment's token, or `owner` from its owner networks.
        router.add(middleware: AdminAccessMiddleware<BackendRequestContext>(access: access, ownerAllowed: true, guarded: AdminRoutes.isGuarded) { decision, _ in
            guard case .refused(let why) = decision else { return IdentityToolkitError.missingCredential() }
            return IdentityToolkitError.invalidCredential(reason: why)
        })
        let keyed = router.group()
            .add(middleware: APIKeyMiddleware(configuration: toolkit.configuration, toolkit: toolkit))
            .add(middleware: FaultMiddleware(faults: toolkit.faults, toolkit: toolkit))

        // The Admin SDKs' calls: a bearer token and this backend's project, not an API key.
        let admin = router.group().add(middleware: AdminAuthMiddleware(projectID: toolkit.configuration.projectID, access: access))
        for call in ToolkitCalls.all {
            guard let call = call as? any RoutableCall else { preconditionFailure("\(call.operation) cannot be routed") }
            call.route(on: call.isAdmin ? admin : keyed, toolkit: toolkit, table: routes)
        }

        // The Auth Emulator's own, and the public keys: no API key. The SMS and email outboxes are
        // the project's, or under `…/tenants/{tenant}/` a tenant's.
        for endpoint in [IdentityToolkitEndpoint.emulatorVerificationCodes, .emulatorVerificationCodes.inEmulatorTenant] {
            router.get(RouterPath(AdminRoutes.route(endpoint.path))) { _, context in
                try JSONBody(await toolkit.verificationCodes(tenant: context.parameters.get("tenant")))
            }
            routes.add(endpoint.path, .get)
        }
        // The email outbox, as the emulator's (each email's code and link, while the code is unused).
        for endpoint in [IdentityToolkitEndpoint.emulatorOobCodes, .emulatorOobCodes.inEmulatorTenant] {
            router.get(RouterPath(AdminRoutes.route(endpoint.path))) { _, context in
                try JSONBody(OobCodesResponse(oobCodes: try await toolkit.emailOutbox(tenant: context.parameters.get("tenant")).map {
                    OobCode(email: $0.email, oobCode: $0.code, oobLink: $0.link, requestType: $0.requestType.rawValue)
                }))
            }
            routes.add(endpoint.path, .get)
        }
        // authsim's own: what became of the silent pushes (an app in another process reads why none came).
        router.get("/emulator/v1/projects/:project/silentPushes") { _, context in
            try checkProject(context)
            return try JSONBody(SilentPushesResponse(silentPushes: try await toolkit.silentPushResults()))
        }
        routes.add("/emulator/v1/projects/{project}/silentPushes", .get)
        // The project config (its reCAPTCHA part), as the emulator's own config endpoint: no key.
        let configPath = "/emulator/v1/projects/{project}/config"
        @Sendable func checkProject(_ context: BackendRequestContext) throws {
            let asked = context.parameters.get("project") ?? ""
            guard asked == toolkit.configuration.projectID else {
                throw IdentityToolkitError(.notFound, "project \(asked) is not this backend's (\(toolkit.configuration.projectID))")
            }
        }
        router.get("/emulator/v1/projects/:project/config") { _, context in
            try checkProject(context)
            return try JSONBody(try await toolkit.projectConfigForAdmin())
        }
        router.patch("/emulator/v1/projects/:project/config") { request, context in
            try checkProject(context)
            let body = try await request.body.collect(upTo: context.maxUploadSize)
            let patch = try IdentityToolkitJSON.decodeChecked(EmulatorProjectConfig.self, from: body.readableBytesView, what: "the project config")
            return try JSONBody(try await toolkit.updateProjectConfig(patch))
        }
        routes.add(configPath, .get)
        routes.add(configPath, .patch)
        // The ID tokens' public key where Google publishes its own: JWKS (two paths) and X.509.
        for path in [JSONWebKeySet.firebaseIDTokenKeysPath, JSONWebKeySet.firebaseIDTokenJWKPath] {
            router.get(RouterPath(path)) { _, _ in try JSONBody(toolkit.tokenSigner.jwks, cacheSeconds: 21_600) }
            routes.add(path, .get)
        }
        router.get(RouterPath(JSONWebKeySet.firebaseIDTokenX509Path)) { _, _ in
            try JSONBody(toolkit.tokenSigner.x509Certificates, cacheSeconds: 21_600)
        }
        routes.add(JSONWebKeySet.firebaseIDTokenX509Path, .get)

        AdminRoutes.add(to: router, toolkit: toolkit, table: routes)

        // The auth handler page (HTML), as the SDK's web view loads it: reCAPTCHA (`verifyApp`) or
        // an identity provider's sign-in (`signInWithRedirect`, `OAuthProvider`'s web flow); the
        // emulator's path for the latter, as the SDK opens it with `useEmulator`.
        @Sendable func page(_ status: Int, _ html: String) -> Response {
            Response(status: .init(code: status), headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: html)))
        }
        router.get("/__/auth/handler") { request, _ in
            let items = request.uri.queryItems
            if items.first(where: { $0.name == "authType" })?.value == "signInWithRedirect" {
                let (status, html) = await toolkit.providerPage(query: items, page: Self.pageURL(request, scheme: "https", path: "/__/auth/handler"))
                return page(status, html)
            }
            let (status, html) = await toolkit.recaptchaPage(query: items)
            return page(status, html)
        }
        routes.add("/__/auth/handler", .get)
        router.get("/emulator/auth/handler") { request, _ in
            let (status, html) = await toolkit.providerPage(query: request.uri.queryItems,
                                                            page: Self.pageURL(request, scheme: "http", path: "/emulator/auth/handler"))
            return page(status, html)
        }
        routes.add("/emulator/auth/handler", .get)

        // The reCAPTCHA Enterprise service, as the app's RecaptchaEnterprise SDK calls it (simulated).
        router.post(RouterPath(RecaptchaEnterpriseService.executePath)) { request, context in
            let body = try await request.body.collect(upTo: context.maxUploadSize)
            let asked = try IdentityToolkitJSON.decode(RecaptchaEnterpriseExecuteRequest.self, from: body.readableBytesView)
            return try JSONBody(try await toolkit.executeRecaptchaEnterprise(asked))
        }
        routes.add(RecaptchaEnterpriseService.executePath, .post)
        router.post(RouterPath(RecaptchaEnterpriseService.fetchClientPath)) { request, context in
            let body = try await request.body.collect(upTo: context.maxUploadSize)
            let asked = try IdentityToolkitJSON.decode(RecaptchaEnterpriseFetchClientRequest.self, from: body.readableBytesView)
            return try JSONBody(try await toolkit.fetchRecaptchaClient(asked))
        }
        routes.add(RecaptchaEnterpriseService.fetchClientPath, .post)

        // Apple's side of Sign in with Apple.
        router.get("/appleid/auth/keys") { _, _ in try JSONBody(toolkit.appleID.jwks) }
        routes.add("/appleid/auth/keys", .get)
        router.post("/appleid/auth/authorize") { request, context in
            let body = try await request.body.collect(upTo: maximumBodyBytes)
            let asked: AppleAuthorizeRequest
            do { asked = try IdentityToolkitJSON.decode(AppleAuthorizeRequest.self, from: body.readableBytesView) } catch let error as IdentityToolkitError {
                throw IdentityToolkitError(.oauthInvalidRequest, "client_id and user are required: \(error.detail ?? error.message)")
            }
            return try JSONBody(try await toolkit.appleAuthorize(asked))
        }
        routes.add("/appleid/auth/authorize", .post)
        return router
    }
}

/// What a backend request carries beyond Hummingbird's own: the body limit and the client's
/// address (for the Admin routes' owner networks).
struct BackendRequestContext: RequestContext, PeerAddressContext {
    var coreContext: CoreRequestContextStorage
    let peer: SocketAddress?
    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peer = source.channel.remoteAddress
    }
    var maxUploadSize: Int { BackendRouter.maximumBodyBytes }
}

/// The methods each registered path answers (filled while the router is built, read while it
/// serves), for 405 rather than 404 on a known path.
final class RouteMethods: Sendable {
    private let methods = Mutex<[String: Set<String>]>([:])
    func add(_ path: String, _ method: IdentityToolkitEndpoint.Method) {
        methods.withLock { _ = $0[path, default: []].insert(method.rawValue) }
    }
    /// The methods `path` answers (an emulator path with any project); empty for an unknown path.
    func methods(for path: String) -> Set<String> {
        methods.withLock { table in
            if let exact = table[path] { return exact }
            let parts = path.split(separator: "/", omittingEmptySubsequences: false)
            for (template, methods) in table where template.contains("{") {
                let pattern = template.split(separator: "/", omittingEmptySubsequences: false)
                if pattern.count == parts.count, zip(pattern, parts).allSatisfy({ $0.hasPrefix("{") || $0 == $1 }) { return methods }
            }
            return []
        }
    }
}

/// A Codable value as the answer: `application/json; charset=UTF-8`, keys sorted; with
/// `cacheSeconds`, `Cache-Control: public, max-age=…` (as Google serves its keys: verifiers cache
/// them for that long).
struct JSONBody<Value: Encodable>: ResponseGenerator {
    let bytes: [UInt8]
    let cacheSeconds: Int?
    init(_ value: Value, cacheSeconds: Int? = nil) throws(IdentityToolkitError) {
        bytes = try IdentityToolkitJSON.encode(value)
        self.cacheSeconds = cacheSeconds
    }
    func response(from request: Request, context: some RequestContext) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=UTF-8"]
        if let cacheSeconds { headers[.cacheControl] = "public, max-age=\(cacheSeconds), must-revalidate, no-transform" }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// The backend's errors answer for themselves: Google's envelope, with the code's HTTP status.
/// (The conformance lives here, not beside the type: the API module stays free of server code, as
/// the auth core depends on it.)
extension IdentityToolkitError: HTTPResponseError {
    public var status: HTTPResponse.Status { .init(code: httpStatus) }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=UTF-8"],
                 body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

/// Anything thrown on the way becomes an ``IdentityToolkitError`` in Google's envelope: an unknown
/// path is 404 NOT_FOUND, a known path asked with another method 405, a body over the limit 413,
/// anything else 500. (Without it Hummingbird answers those with empty bodies the SDK cannot read.)
struct ErrorEnvelopeMiddleware: RouterMiddleware {
    typealias Context = BackendRequestContext
    let routes: RouteMethods

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as IdentityToolkitError {
            throw error
        } catch is NIOTooManyBytesError {
            throw IdentityToolkitError(.payloadTooLarge, "the request body is larger than \(BackendRouter.maximumBodyBytes) bytes")
        } catch let error as HTTPError where error.status == .notFound {
            let allowed = routes.methods(for: request.uri.path)
            guard allowed.isEmpty else {
                throw IdentityToolkitError(.methodNotAllowed, "\(request.uri.path) takes \(allowed.sorted().joined(separator: " or ")), not \(request.method)")
            }
            throw IdentityToolkitError(.notFound, "no such endpoint: \(request.uri.path)")
        } catch let error as HTTPError {
            throw IdentityToolkitError(.init(rawValue: "HTTP_\(error.status.code)"), error.body ?? error.status.reasonPhrase,
                                       status: error.status.code)
        } catch {
            throw IdentityToolkitError(.internal, "\(error)")
        }
    }
}

/// Times every request, answered or thrown (outermost, so an error's envelope counts too).
struct MetricsMiddleware: RouterMiddleware {
    typealias Context = BackendRequestContext
    let metrics: RequestMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        func seconds() -> Double { (ContinuousClock.now - start).inSeconds }
        do {
            let response = try await next(request, context)
            metrics.observe(route: context.endpointPath ?? "unmatched", status: response.status.code, seconds: seconds())
            return response
        } catch let error as HTTPResponseError {
            metrics.observe(route: context.endpointPath ?? "unmatched", status: error.status.code, seconds: seconds())
            throw error
        } catch {
            metrics.observe(route: context.endpointPath ?? "unmatched", status: 500, seconds: seconds())
            throw error
        }
    }
}

/// What Google's front end checks before Identity Toolkit sees a request: the API key (`?key=` or
/// `x-goog-api-key`; missing: 403 PERMISSION_DENIED; not taken by
/// ``BackendConfiguration/accepts(apiKey:)``: 400 API_KEY_INVALID, the service's words), and, for
/// a key restricted to iOS apps, the request's `X-Ios-Bundle-Identifier`. Its errors are the front
/// end's, not Identity Toolkit's.
struct APIKeyMiddleware: RouterMiddleware {
    typealias Context = BackendRequestContext
    /// Its key rule, iOS-app restriction (empty: none) and project number.
    let configuration: BackendConfiguration
    /// Told of each refusal, as the toolkit's own events are.
    let toolkit: IdentityToolkit

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let refusal = refusal(request) {
            await toolkit.note(.frontendRefused(path: request.uri.path, refusal))
            throw refusal
        }
        return try await next(request, context)
    }

    private func refusal(_ request: Request) -> IdentityToolkitError? {
        let given = request.uri.queryParameters.get("key") ?? request.headers[.googAPIKey]
        guard let given, !given.isEmpty else { return .apiKeyMissing() }
        guard configuration.accepts(apiKey: given) else { return .apiKeyInvalid() }
        let iosBundleIDs = configuration.apiKeyIOSBundleIDs
        if !iosBundleIDs.isEmpty {
            let bundleID = request.headers[.iosBundleIdentifier]
            guard let bundleID, iosBundleIDs.contains(bundleID) else {
                return .iosAppBlocked(bundleID: bundleID, projectNumber: configuration.projectNumber)
            }
        }
        return nil
    }
}

/// Answers a request with a queued ``BackendFault`` for its endpoint, if there is one, instead of
/// the toolkit: what a test or scenario needs to see an app meet any answer the service can give.
struct FaultMiddleware: RouterMiddleware {
    typealias Context = BackendRequestContext
    let faults: BackendFaults
    let toolkit: IdentityToolkit

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let fault = faults.take(path: request.uri.path) else { return try await next(request, context) }
        await toolkit.note(.faultAnswered(path: request.uri.path, fault))
        return Response(status: .init(code: fault.status), headers: [.contentType: "application/json; charset=UTF-8"],
                        body: .init(byteBuffer: ByteBuffer(string: fault.body)))
    }
}

extension HTTPField.Name {
    static let googAPIKey = Self("x-goog-api-key")!
    static let firebaseLocale = Self("x-firebase-locale")!
    static let iosBundleIdentifier = Self("x-ios-bundle-identifier")!
}

