import Utilities
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix

/// The local backend on HTTP: Identity Toolkit JSON with emulator-style paths.
///
/// | path | what |
/// |---|---|
/// | `/www.googleapis.com/identitytoolkit/v3/relyingparty/verifyClient` | app credential: receipt, suggestedTimeout; sends the silent push |
/// | `…/v3/relyingparty/sendVerificationCode`, `/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode` | a code by SMS |
/// | `…/v3/relyingparty/verifyPhoneNumber`, `…/v1/accounts:signInWithPhoneNumber` | sign in with the code |
/// | `/emulator/v1/projects/{project}/verificationCodes` | the SMS outbox |
/// | `/www.googleapis.com/robot/v1/metadata/jwk/securetoken@system.gserviceaccount.com` | the ID-token keys (JWKS) |
///
/// Every Identity Toolkit call needs the API key (`?key=` or `x-goog-api-key`).
public final class BackendServer: Sendable {
    public let toolkit: IdentityToolkit
    public let port: Int
    public let host: String
    private let channel: Channel
    private let group: MultiThreadedEventLoopGroup

    private init(toolkit: IdentityToolkit, host: String, port: Int, channel: Channel, group: MultiThreadedEventLoopGroup) {
        self.toolkit = toolkit
        self.host = host
        self.port = port
        self.channel = channel
        self.group = group
    }

    /// `http://host:port`: what an app gives `auth.useEmulator(withHost:port:)`.
    public var baseURL: String { "http://\(host):\(port)" }

    public static func start(toolkit: IdentityToolkit, host: String = "127.0.0.1", port: Int = 0) async throws -> BackendServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let router = BackendRouter(toolkit: toolkit)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(BackendHTTPHandler(router: router))
                }
            }
        let channel: Channel
        do { channel = try await bootstrap.bind(host: host, port: port).get() } catch {
            try? await group.shutdownGracefully()
            throw BackendError("BIND_FAILED", "cannot listen on \(host):\(port): \(error)", status: 500)
        }
        return BackendServer(toolkit: toolkit, host: host, port: channel.localAddress?.port ?? port, channel: channel, group: group)
    }

    public func shutdown() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}

/// Maps a request to the toolkit and its answer to JSON.
struct BackendRouter: Sendable {
    let toolkit: IdentityToolkit

    struct Response: Sendable {
        var status: Int
        var body: [UInt8]
        var contentType = "application/json; charset=UTF-8"
    }

    func handle(method: String, uri: String, headers: [(String, String)], body: [UInt8]) async -> Response {
        let components = URLComponents(string: uri)
        let path = components?.path ?? uri
        let query = components?.queryItems ?? []
        if method == "GET", path.hasPrefix("/emulator/v1/projects/"), path.hasSuffix("/verificationCodes") {
            let codes = await toolkit.verificationCodes().map {
                ["code": $0.code, "phoneNumber": $0.phoneNumber, "sessionInfo": $0.sessionInfo]
            }
            return json(["verificationCodes": codes])
        }
        if method == "GET", path == "/www.googleapis.com/robot/v1/metadata/jwk/securetoken@system.gserviceaccount.com" {
            return json(toolkit.tokenSigner.jwks)
        }
        if path.hasPrefix("/appleid/") { return await apple(method: method, path: path, body: body) }
        if method == "GET", path == "/__/auth/handler" {
            let (status, html) = await toolkit.recaptchaPage(query: query)
            return Response(status: status, body: Array(html.utf8), contentType: "text/html; charset=utf-8")
        }
        let key = query.first { $0.name == "key" }?.value
            ?? headers.first { $0.0.lowercased() == "x-goog-api-key" }?.1
        let endpoint = Self.endpoint(for: path)
        guard let endpoint else {
            return error(BackendError("NOT_FOUND", "no such endpoint: \(path)", status: 404))
        }
        guard method == "POST" || endpoint == .getProjectConfig else {
            return error(BackendError("METHOD_NOT_ALLOWED", "use POST", status: 405))
        }
        guard let key, !key.isEmpty else {
            return error(BackendError("PERMISSION_DENIED", "The request is missing a valid API key.", status: 403))
        }
        guard key == toolkit.configuration.apiKey else {
            return error(BackendError("API_KEY_INVALID", "API key not valid. Please pass a valid API key.", status: 400))
        }
        if endpoint == .getProjectConfig {
            return json(["projectId": toolkit.configuration.projectID, "authorizedDomains": toolkit.configuration.authorizedDomains])
        }
        guard let request = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            return error(BackendError("INVALID_JSON", "the request body is not a JSON object"))
        }
        do throws(BackendError) {
            switch endpoint {
            case .verifyClient:
                let (receipt, timeout) = try await toolkit.verifyClient(
                    appToken: request["appToken"] as? String, isSandbox: request["isSandbox"] as? Bool ?? false)
                return json(["receipt": receipt, "suggestedTimeout": timeout])
            case .sendVerificationCode:
                let info = try await toolkit.sendVerificationCode(
                    phoneNumber: request["phoneNumber"] as? String, iosReceipt: request["iosReceipt"] as? String,
                    iosSecret: request["iosSecret"] as? String, recaptchaToken: request["recaptchaToken"] as? String,
                    languageCode: headers.first { $0.0.lowercased() == "x-firebase-locale" }?.1)
                return json(["sessionInfo": info])
            case .getProjectConfig:
                return json([:])  // answered above, before the body is read
            case .signInWithPhoneNumber:
                let result = try await toolkit.signInWithPhoneNumber(
                    sessionInfo: request["sessionInfo"] as? String,
                    code: (request["code"] as? String) ?? (request["verificationCode"] as? String))
                return json(["idToken": result.idToken, "refreshToken": result.refreshToken, "expiresIn": result.expiresIn,
                             "localId": result.localId, "isNewUser": result.isNewUser, "phoneNumber": result.phoneNumber ?? ""])
            case .signInWithIdp:
                let result = try await toolkit.signInWithIdp(
                    postBody: request["postBody"] as? String, pendingToken: request["pendingToken"] as? String,
                    idToken: request["idToken"] as? String, displayName: request["displayName"] as? String)
                var answer: [String: Any] = ["providerId": "apple.com", "federatedId": result.federatedId, "isNewUser": result.isNewUser,
                                             "kind": "identitytoolkit#VerifyAssertionResponse"]
                if let idToken = result.idToken { answer["idToken"] = idToken; answer["expiresIn"] = "3600" }
                if let refreshToken = result.refreshToken { answer["refreshToken"] = refreshToken }
                if let localId = result.localId { answer["localId"] = localId }
                if let email = result.email { answer["email"] = email }
                if let name = result.displayName { answer["displayName"] = name }
                if let message = result.errorMessage { answer["errorMessage"] = message }
                if let pending = result.pendingToken { answer["pendingToken"] = pending }
                return json(answer)
            case .revokeToken:
                guard request["providerId"] as? String == "apple.com", request["tokenType"] as? String == "CODE" else {
                    throw BackendError("INVALID_REQUEST", "providerId must be apple.com and tokenType CODE")
                }
                try await toolkit.revokeAppleToken(code: request["token"] as? String, idToken: request["idToken"] as? String)
                return json([:])
            case .deleteAccount:
                try await toolkit.deleteAccount(idToken: request["idToken"] as? String)
                return json(["kind": "identitytoolkit#DeleteAccountResponse"])
            case .setAccountInfo:
                let user = try await toolkit.updateProfile(idToken: request["idToken"] as? String, displayName: request["displayName"] as? String)
                return json(["localId": user.localId, "displayName": user.displayName ?? "", "email": user.email ?? ""])
            }
        } catch {
            return self.error(error)
        }
    }

    enum Endpoint { case verifyClient, sendVerificationCode, signInWithPhoneNumber, getProjectConfig, signInWithIdp, revokeToken, deleteAccount, setAccountInfo }

    static func endpoint(for path: String) -> Endpoint? {
        switch path {
        case "/www.googleapis.com/identitytoolkit/v3/relyingparty/verifyClient": return .verifyClient
        case "/www.googleapis.com/identitytoolkit/v3/relyingparty/getProjectConfig": return .getProjectConfig
        case "/www.googleapis.com/identitytoolkit/v3/relyingparty/sendVerificationCode",
             "/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode": return .sendVerificationCode
        case "/www.googleapis.com/identitytoolkit/v3/relyingparty/verifyPhoneNumber",
             "/identitytoolkit.googleapis.com/v1/accounts:signInWithPhoneNumber": return .signInWithPhoneNumber
        case "/www.googleapis.com/identitytoolkit/v3/relyingparty/verifyAssertion",
             "/identitytoolkit.googleapis.com/v1/accounts:signInWithIdp": return .signInWithIdp
        case "/identitytoolkit.googleapis.com/v2/accounts:revokeToken": return .revokeToken
        case "/www.googleapis.com/identitytoolkit/v3/relyingparty/deleteAccount",
             "/identitytoolkit.googleapis.com/v1/accounts:delete": return .deleteAccount
        case "/www.googleapis.com/identitytoolkit/v3/relyingparty/setAccountInfo",
             "/identitytoolkit.googleapis.com/v1/accounts:update": return .setAccountInfo
        default: return nil
        }
    }

    /// Apple's endpoints, simulated: `GET /appleid/auth/keys` (the JWKS) and `POST /appleid/auth/authorize`
    /// (the Sign in with Apple sheet: a user consents; the answer is what ASAuthorizationAppleIDCredential holds).
    private func apple(method: String, path: String, body: [UInt8]) async -> Response {
        switch (method, path) {
        case ("GET", "/appleid/auth/keys"):
            return json(toolkit.appleID.jwks)
        case ("POST", "/appleid/auth/authorize"):
            guard let request = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any],
                  let clientID = request["client_id"] as? String, let user = request["user"] as? String else {
                return error(BackendError("invalid_request", "client_id and user are required"))
            }
            let scopes = (request["scope"] as? String ?? "name email").split(separator: " ").map(String.init)
            do {
                let issuedAt = (request["issued_at"] as? Double).map { Date(timeIntervalSince1970: $0) }
                let authorization = try toolkit.appleID.authorize(
                    clientID: clientID, appleUser: user, nonce: request["nonce"] as? String, wantsEmail: scopes.contains("email"),
                    wantsName: scopes.contains("name"), hideEmail: request["hide_email"] as? Bool ?? false,
                    givenName: request["given_name"] as? String, familyName: request["family_name"] as? String, issuedAt: issuedAt)
                var answer: [String: Any] = ["identity_token": authorization.identityToken, "authorization_code": authorization.authorizationCode,
                                             "user": authorization.user]
                if let email = authorization.email { answer["email"] = email }
                if let given = authorization.givenName { answer["given_name"] = given }
                if let family = authorization.familyName { answer["family_name"] = family }
                return json(answer)
            } catch {
                return self.error(BackendError("server_error", "\(error)", status: 500))
            }
        default:
            return error(BackendError("NOT_FOUND", "no such Apple endpoint: \(method) \(path)", status: 404))
        }
    }

    private func json(_ object: Any) -> Response {
        Response(status: 200, body: CompactJSON.bytes(object) ?? [])
    }

    private func error(_ error: BackendError) -> Response { Response(status: error.status, body: error.body) }
}

/// HTTP/1.1 plumbing: one request at a time per connection, JSON out.
final class BackendHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let router: BackendRouter
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []

    init(router: BackendRouter) { self.router = router }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
        case .body(let buffer):
            if body.count < 1_000_000 { body.append(contentsOf: buffer.readableBytesView) }
        case .end:
            guard let head else { return }
            let router = self.router
            let body = self.body
            let headers = head.headers.map { ($0.name, $0.value) }
            let keepAlive = head.isKeepAlive
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.makeFutureWithTask {
                await router.handle(method: head.method.rawValue, uri: head.uri, headers: headers, body: body)
            }.whenSuccess { response in
                let (handler, context) = bound.value
                handler.write(response, keepAlive: keepAlive, context: context)
            }
        }
    }

    private func write(_ response: BackendRouter.Response, keepAlive: Bool, context: ChannelHandlerContext) {
        var headers = HTTPHeaders([("content-type", response.contentType), ("content-length", String(response.body.count))])
        if !keepAlive { headers.add(name: "connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .init(statusCode: response.status), headers: headers))), promise: nil)
        var buffer = context.channel.allocator.buffer(capacity: response.body.count)
        buffer.writeBytes(response.body)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
