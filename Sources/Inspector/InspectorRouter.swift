import APNsReceiver
import APNsWire
import AuthBackend
import DeviceLink
import Foundation
import HTTPServerSupport
import HTTPTypes
import Hummingbird
import IdentityToolkitAPI
import NIOCore
import Utilities

/// What the inspector shows and changes: the receiver's pushes (``PushHistory``), its faults and
/// devices, and the backend's SMS and users.
public struct InspectorSources: Sendable {
    public var history: PushHistory
    public var flows: FlowHistory
    public var faults: FaultPlan
    public var registry: DeviceRegistry
    public var toolkit: IdentityToolkit?
    /// Whether every part is up (`/readyz`).
    public var ready: @Sendable () -> Bool

    public init(history: PushHistory, flows: FlowHistory = FlowHistory(), faults: FaultPlan, registry: DeviceRegistry, toolkit: IdentityToolkit?,
                ready: @escaping @Sendable () -> Bool = { true }) {
        self.history = history
        self.flows = flows
        self.faults = faults
        self.registry = registry
        self.toolkit = toolkit
        self.ready = ready
    }
}

/// An error of the inspector's API: a status and a sentence, as `{"error": {"code", "message"}}`.
public struct InspectorError: Error, HTTPResponseError, Sendable {
    public let status: HTTPResponse.Status
    public let message: String
    public init(_ status: HTTPResponse.Status, _ message: String) {
        self.status = status
        self.message = message
    }
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let bytes = (try? IdentityToolkitJSON.encode(InspectorErrorBody(error: .init(code: status.code, message: message)))) ?? []
        return Response(status: status, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

struct InspectorErrorBody: Encodable {
    struct Inner: Encodable { let code: Int; let message: String }
    let error: Inner
}

/// The inspector on HTTP: the page (`/`, from the package's resources), the JSON API under
/// `/api/v1/` (described by `/api/v1/openapi.json`), live pushes as Server-Sent Events
/// (`/api/v1/events`), Prometheus metrics (`/metrics`) and health (`/livez`, `/readyz`).
public enum InspectorRouter {
    public static func make(_ sources: InspectorSources) -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: InspectorErrorMiddleware())
        let history = sources.history

        // The page and its files.
        for (path, file, type) in [("/", "index.html", "text/html; charset=utf-8"), ("/app.js", "app.js", "text/javascript; charset=utf-8"),
                                   ("/style.css", "style.css", "text/css; charset=utf-8"),
                                   ("/api/v1/openapi.json", "openapi.json", "application/json; charset=utf-8")] {
            router.get(RouterPath(path)) { _, _ in
                guard let bytes = Self.resource(file) else { throw InspectorError(.internalServerError, "the package's resource \(file) is missing") }
                return Response(status: .ok, headers: [.contentType: type, .cacheControl: "no-cache"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
            }
        }

        // Pushes.
        router.get("/api/v1/pushes") { request, _ in try json(try PushFilter(request.uri.queryItems).apply(history.all)) }
        router.get("/api/v1/pushes/latest") { request, _ in
            guard let latest = try PushFilter(request.uri.queryItems).apply(history.all).last else {
                throw InspectorError(.notFound, "no push matches (yet)")
            }
            return try json(latest)
        }
        router.get("/api/v1/pushes/:id") { _, context in
            guard let text = context.parameters.get("id"), let id = Int(text) else { throw InspectorError(.badRequest, "a push's id is a number") }
            guard let push = history.push(id: id) else { throw InspectorError(.notFound, "no push \(id) in view (the view keeps the newest \(history.capacity))") }
            return try json(push)
        }
        router.delete("/api/v1/pushes") { _, _ in
            history.clear()
            return Response(status: .noContent)
        }
        router.get("/api/v1/rejections") { request, _ in
            try json(try PushFilter(request.uri.queryItems).apply(history.all).filter { $0.status != 200 })
        }
        router.get("/api/v1/events") { _, _ in
            let subscription = history.subscribe()
            return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"], body: .init { writer in
                defer { history.unsubscribe(subscription) }
                try await writer.write(ByteBuffer(string: ": authsim inspector: `pushes` events, each {\"pushes\": [...], \"skipped\": N}\n\n"))
                // At most one event per 100 ms, of at most 50 pushes: a watcher costs the receiver
                // (two cores, shared) a bounded amount whatever the push rate.
                while let (pushes, skipped) = await history.next(of: subscription) {
                    let data = String(decoding: try Self.encode(EventBatch(pushes: pushes, skipped: skipped)), as: UTF8.self)
                    try await writer.write(ByteBuffer(string: "event: pushes\nid: \(pushes.last?.id ?? 0)\ndata: \(data)\n\n"))
                    try await Task.sleep(for: .milliseconds(100))
                }
                try await writer.finish(nil)
            })
        }

        // Sign-ins, as the backend saw them.
        router.get("/api/v1/flows") { request, _ in
            var flows = sources.flows.all
            var limit = 100
            for item in request.uri.queryItems {
                switch item.name {
                case "phoneNumber": flows = flows.filter { $0.phoneNumber == item.value }
                case "uid": flows = flows.filter { $0.uid == item.value }
                case "limit":
                    guard let parsed = item.value.flatMap(Int.init), parsed > 0 else { throw InspectorError(.badRequest, "limit is a positive number") }
                    limit = parsed
                default: throw InspectorError(.badRequest, "unknown filter \(item.name); filters: phoneNumber, uid, limit")
                }
            }
            return try json(Array(flows.suffix(limit)))
        }
        @Sendable func flow(_ context: some RequestContext) throws -> InspectedFlow {
            guard let text = context.parameters.get("id"), let id = Int(text) else { throw InspectorError(.badRequest, "a flow's id is a number") }
            guard let flow = sources.flows.flow(id: id) else { throw InspectorError(.notFound, "no flow \(id) (the inspector keeps the newest \(sources.flows.capacity))") }
            return flow
        }
        router.get("/api/v1/flows/:id") { _, context in try json(try flow(context)) }
        // The sign-in's sequence diagram, drawn by the renderer `authsim run --diagram` uses: the page shows it as it is.
        router.get("/api/v1/flows/:id/diagram") { _, context in
            Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
                     body: .init(byteBuffer: ByteBuffer(string: try flow(context).diagram)))
        }

        // Faults, in push-receiver --fault syntax.
        router.get("/api/v1/faults") { _, _ in try json(FaultList(faults: sources.faults.current.map(\.description))) }
        router.put("/api/v1/faults") { request, context in
            let body = try await request.body.collect(upTo: 1_000_000)
            let list: FaultList
            do { list = try JSONDecoder().decode(FaultList.self, from: Data(buffer: body)) } catch {
                throw InspectorError(.badRequest, "the body is {\"faults\": [\"reject=BadDeviceToken,count=1\", …]} (push-receiver --fault syntax): \(error)")
            }
            var rules: [FaultRule] = []
            for (index, text) in list.faults.enumerated() {
                do { rules.append(try FaultRule(parsing: text)) } catch let error as ReceiverError {
                    throw InspectorError(.badRequest, "faults[\(index)]: \(error.message)")
                }
            }
            sources.faults.replace(with: rules)
            return try json(FaultList(faults: rules.map(\.description)))
        }
        router.delete("/api/v1/faults") { _, _ in
            sources.faults.clear()
            return Response(status: .noContent)
        }

        // Devices.
        router.get("/api/v1/devices") { _, _ in try json(sources.registry.all) }
        router.post("/api/v1/devices") { request, _ in
            let body = try await request.body.collect(upTo: 100_000)
            let asked: DeviceRegistration
            do { asked = try JSONDecoder().decode(DeviceRegistration.self, from: Data(buffer: body)) } catch {
                throw InspectorError(.badRequest, #"the body is {"environment": "sandbox|production", "bundleID": "…", "token": "hex (optional)", "label": "… (optional)"}"#)
            }
            guard let environment = APNsEnvironment(rawValue: asked.environment) else {
                throw InspectorError(.badRequest, "environment is sandbox or production, not \(asked.environment)")
            }
            guard !asked.bundleID.isEmpty else { throw InspectorError(.badRequest, "bundleID is the app's bundle ID") }
            var token = DeviceToken.random()
            if let given = asked.token {
                guard let parsed = DeviceToken(hex: given) else { throw InspectorError(.badRequest, "token \(given) is not an even-length hex device token") }
                token = parsed
            }
            let device = RegisteredDevice(token: token, environment: environment, bundleID: asked.bundleID, label: asked.label)
            try sources.registry.register(device)
            return try json(device)
        }
        router.post("/api/v1/devices/:environment/:token/invalidate") { request, context in
            guard let environment = context.parameters.get("environment").flatMap(APNsEnvironment.init(rawValue:)) else {
                throw InspectorError(.badRequest, "the environment is sandbox or production")
            }
            guard let token = context.parameters.get("token").flatMap(DeviceToken.init(hex:)) else {
                throw InspectorError(.badRequest, "the token is an even-length hex device token")
            }
            let state = request.uri.queryParameters.get("as") ?? "unregistered"
            guard let newState = RegisteredDevice.State(rawValue: state), newState != .active else {
                throw InspectorError(.badRequest, "as= is unregistered (410 Unregistered) or expired (410 ExpiredToken), not \(state)")
            }
            guard try sources.registry.invalidate(token, in: environment, as: newState, at: Date()) else {
                throw InspectorError(.notFound, "no device \(token.hex) in \(environment)")
            }
            return try json(sources.registry.lookup(token, in: environment))
        }

        // The backend's SMS and users.
        router.get("/api/v1/sms") { _, _ in
            guard let toolkit = sources.toolkit else { throw InspectorError(.notFound, "no backend in this process") }
            return try json(await toolkit.messages)
        }
        router.get("/api/v1/users") { _, _ in
            guard let toolkit = sources.toolkit else { throw InspectorError(.notFound, "no backend in this process") }
            return try json(await toolkit.exportAccounts().users ?? [])
        }
        router.patch("/api/v1/users/:uid") { request, context in
            guard let toolkit = sources.toolkit else { throw InspectorError(.notFound, "no backend in this process") }
            let body = try await request.body.collect(upTo: 100_000)
            struct Change: Decodable { let disabled: Bool }
            let change: Change
            do { change = try JSONDecoder().decode(Change.self, from: Data(buffer: body)) } catch {
                throw InspectorError(.badRequest, "the body is {\"disabled\": true|false}")
            }
            do {
                _ = try await toolkit.adminUpdate(SetAccountInfoRequest(localId: context.parameters.get("uid"), disableUser: change.disabled))
            } catch let error as IdentityToolkitError { throw InspectorError(error.code == .userNotFound ? .notFound : .badRequest, error.message) }
            return try json(await toolkit.adminLookup(GetAccountInfoRequest(localId: [context.parameters.get("uid") ?? ""])).users?.first)
        }
        router.delete("/api/v1/users/:uid") { _, context in
            guard let toolkit = sources.toolkit else { throw InspectorError(.notFound, "no backend in this process") }
            do { _ = try await toolkit.adminDelete(DeleteAccountRequest(idToken: nil, localId: context.parameters.get("uid"))) } catch let error as IdentityToolkitError {
                throw InspectorError(error.code == .userNotFound ? .notFound : .badRequest, error.message)
            }
            return Response(status: .noContent)
        }

        // Operations.
        router.get("/livez") { _, _ in Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "ok\n"))) }
        router.get("/readyz") { _, _ in
            sources.ready() ? Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "ready\n")))
                : Response(status: .serviceUnavailable, body: .init(byteBuffer: ByteBuffer(string: "starting\n")))
        }
        router.get("/metrics") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                     body: .init(byteBuffer: ByteBuffer(string: await Metrics.text(sources))))
        }
        return router
    }

    struct FaultList: Codable { let faults: [String] }
    /// One live event: the pushes since the last (oldest first), and how many were left out
    /// because the watcher fell behind.
    struct EventBatch: Encodable { let pushes: [InspectedPush]; let skipped: Int }

    static func json(_ value: some Encodable) throws -> Response {
        Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: try encode(value))))
    }

    /// The API's JSON: keys sorted, dates RFC 3339 with milliseconds.
    static func encode(_ value: some Encodable) throws(InspectorError) -> [UInt8] {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            encoder.dateEncodingStrategy = .custom { date, encoder in
                var container = encoder.singleValueContainer()
                try container.encode(RFC3339.string(date))
            }
            return Array(try encoder.encode(value))
        } catch { throw InspectorError(.internalServerError, "cannot encode the answer: \(error)") }
    }


    /// A file of `Sources/Inspector/Resources`.
    static func resource(_ name: String) -> [UInt8]? {
        let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Resources")
            ?? Bundle.module.url(forResource: name, withExtension: nil)
        return url.flatMap { FileManager.default.contents(atPath: $0.path) }.map(Array.init)
    }
}

/// The pushes a query asks for: `token`, `topic`, `environment`, `status`, `reason`, `since`
/// (RFC 3339 or seconds since 1970), `after` (an id), `limit` (the newest N, default 100, at most
/// the view's size). Anything else is a 400 that names what is allowed.
struct PushFilter {
    static let names = ["token", "topic", "environment", "status", "reason", "since", "after", "limit"]
    var token: String?
    var topic: String?
    var environment: APNsEnvironment?
    var status: Int?
    var reason: String?
    var since: Date?
    var after: Int?
    var limit = 100

    init(_ items: [URLQueryItem]) throws(InspectorError) {
        for item in items {
            let value = item.value ?? ""
            switch item.name {
            case "token": token = value.lowercased()
            case "topic": topic = value
            case "environment":
                guard let parsed = APNsEnvironment(rawValue: value) else { throw InspectorError(.badRequest, "environment is sandbox or production, not \(value)") }
                environment = parsed
            case "status":
                guard let parsed = Int(value), (100...599).contains(parsed) else { throw InspectorError(.badRequest, "status is an HTTP status, not \(value)") }
                status = parsed
            case "reason": reason = value
            case "since":
                if let seconds = Double(value) {
                    since = Date(timeIntervalSince1970: seconds)
                } else {
                    guard let date = RFC3339.date(value) else {
                        throw InspectorError(.badRequest, "since is RFC 3339 (2026-11-24T10:00:00Z) or seconds since 1970, not \(value)")
                    }
                    since = date
                }
            case "after":
                guard let parsed = Int(value) else { throw InspectorError(.badRequest, "after is a push id, not \(value)") }
                after = parsed
            case "limit":
                guard let parsed = Int(value), parsed > 0 else { throw InspectorError(.badRequest, "limit is a positive number, not \(value)") }
                limit = parsed
            default:
                throw InspectorError(.badRequest, "unknown filter \(item.name); filters: \(Self.names.joined(separator: ", "))")
            }
        }
    }

    func apply(_ pushes: [InspectedPush]) -> [InspectedPush] {
        let matching = pushes.filter { push in
            (token.map { push.deviceToken == $0 } ?? true) && (topic.map { push.topic == $0 } ?? true)
                && (environment.map { push.environment == $0 } ?? true) && (status.map { push.status == $0 } ?? true)
                && (reason.map { push.reason == $0 } ?? true) && (since.map { push.time >= $0 } ?? true) && (after.map { push.id > $0 } ?? true)
        }
        return Array(matching.suffix(limit))
    }
}

/// Unknown paths and Hummingbird's own errors as the API's JSON errors.
struct InspectorErrorMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do { return try await next(request, context) } catch let error as InspectorError { throw error } catch let error as HTTPError {
            throw InspectorError(error.status, error.status == .notFound ? "no such path: \(request.uri.path) (the API is described at /api/v1/openapi.json)"
                                 : error.body ?? error.status.reasonPhrase)
        } catch is NIOTooManyBytesError {
            throw InspectorError(.contentTooLarge, "the body is too large")
        } catch let error as ReceiverError {
            throw InspectorError(.internalServerError, error.message)
        }
    }
}

