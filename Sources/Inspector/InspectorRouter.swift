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
import OpenAPIRuntime
import OpenAPIHummingbird
import Utilities

/// What the inspector shows and changes: the receiver's pushes (``PushHistory``), its faults and
/// devices, and the backend's SMS and users.
package struct InspectorSources: Sendable {
    package var history: PushHistory
    package var flows: FlowHistory
    package var faults: FaultPlan
    package var registry: DeviceRegistry
    package var toolkit: IdentityToolkit?
    /// Whether every part is up (`/readyz`).
    package var ready: @Sendable () -> Bool

    package init(history: PushHistory, flows: FlowHistory = FlowHistory(), faults: FaultPlan, registry: DeviceRegistry, toolkit: IdentityToolkit?,
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
package struct InspectorError: Error, HTTPResponseError, Sendable {
    package let status: HTTPResponse.Status
    package let message: String
    /// Fields the answer carries beside its content type (a 401's `WWW-Authenticate`).
    package let headers: HTTPFields
    package init(_ status: HTTPResponse.Status, _ message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.message = message
        self.headers = headers
    }
    package func response(from request: Request, context: some RequestContext) throws -> Response {
        let bytes = (try? IdentityToolkitJSON.encode(InspectorErrorBody(error: .init(code: status.code, message: message)))) ?? []
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

struct InspectorErrorBody: Encodable {
    struct Inner: Encodable { let code: Int; let message: String }
    let error: Inner
}

/// The inspector on HTTP: the page (`/`, from the package's resources), and the API its
/// document declares (``InspectorAPI``, generated from `API/openapi.json` and served at
/// `/api/v1/openapi.json`): the JSON API under `/api/v1/`, live pushes as Server-Sent Events
/// (`/api/v1/events`), Prometheus metrics (`/metrics`) and health (`/livez`, `/readyz`).
package enum InspectorRouter {
    package static func make(_ sources: InspectorSources, access: AdminAccess = .loopbackOnly) throws(InspectorError) -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: InspectorErrorMiddleware())
        InspectorAccess.add(to: router, access: access)

        // The page and its files.
        for (path, file, type) in [("/", "index.html", "text/html; charset=utf-8"), ("/app.js", "app.js", "text/javascript; charset=utf-8"),
                                   ("/style.css", "style.css", "text/css; charset=utf-8")] {
            router.get(RouterPath(path)) { _, _ in
                guard let bytes = Self.resource(file) else { throw InspectorError(.internalServerError, "the package's resource \(file) is missing") }
                return Response(status: .ok, headers: [.contentType: type, .cacheControl: "no-cache"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
            }
        }

        // The API, from its document.
        guard let document = Self.resource("openapi.json") else { throw InspectorError(.internalServerError, "the package's resource openapi.json is missing") }
        do {
            let checks = DocumentChecks(document: try APIDocument(json: document))
            let api = InspectorAPI(sources: sources, document: try JSONDecoder().decode(OpenAPIObjectContainer.self, from: Data(document)))
            try api.registerHandlers(on: router, serverURL: URL(string: "/")!,
                                     configuration: Configuration(dateTranscoder: .iso8601WithFractionalSeconds,
                                                                  jsonEncodingOptions: [.sortedKeys, .withoutEscapingSlashes]),
                                     middlewares: [checks])
        } catch {
            throw InspectorError(.internalServerError, "the package's openapi.json does not read: \(error)")
        }
        return router
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
/// the view's size). The document types each (``DocumentChecks`` refuses other names and
/// values); what it cannot say is checked here.
struct PushFilter {
    /// What is wrong with a query, said to the user.
    struct Problem: Error { let message: String }

    var token: String?
    var topic: String?
    var environment: APNsEnvironment?
    var status: Int?
    var reason: String?
    /// Text any of the searched fields contains, lowercased (`q`: the page's filter box).
    var search: String?
    var since: Date?
    var after: Int?
    var limit = 100

    static func make(token: String?, topic: String?, environment: String?, status: Int?, reason: String?, search: String? = nil,
                     since: String?, after: Int?, limit: Int?) -> Result<PushFilter, Problem> {
        let search = search?.trimmingCharacters(in: .whitespaces).lowercased()
        var filter = PushFilter(token: token?.lowercased(), topic: topic, status: status, reason: reason, search: search?.isEmpty == false ? search : nil,
                                after: after, limit: limit ?? 100)
        if let environment {
            guard let parsed = APNsEnvironment(rawValue: environment) else { return .failure(Problem(message: "environment is sandbox or production, not \(environment)")) }
            filter.environment = parsed
        }
        if let status, !(100...599).contains(status) { return .failure(Problem(message: "status is an HTTP status, not \(status)")) }
        if let since {
            if let seconds = Double(since) {
                filter.since = Date(timeIntervalSince1970: seconds)
            } else {
                guard let date = RFC3339.date(since) else { return .failure(Problem(message: "since is RFC 3339 (2026-11-24T10:00:00Z) or seconds since 1970, not \(since)")) }
                filter.since = date
            }
        }
        guard filter.limit > 0 else { return .failure(Problem(message: "limit is a positive number, not \(filter.limit)")) }
        return .success(filter)
    }

    func apply(_ pushes: [InspectedPush]) -> [InspectedPush] {
        let matching = pushes.filter { push in
            (token.map { push.deviceToken == $0 } ?? true) && (topic.map { push.topic == $0 } ?? true)
                && (environment.map { push.environment == $0 } ?? true) && (status.map { push.status == $0 } ?? true)
                && (reason.map { push.reason == $0 } ?? true) && (since.map { push.time >= $0 } ?? true) && (after.map { push.id > $0 } ?? true)
                && (search.map { Self.contains(push, $0) } ?? true)
        }
        return Array(matching.suffix(limit))
    }

    /// Whether any field the page shows in a row contains `text` (lowercased), as its filter box reads.
    static func contains(_ push: InspectedPush, _ text: String) -> Bool {
        [push.deviceToken, push.topic ?? "", push.reason ?? "", String(push.status), push.environment.rawValue, push.apnsID, push.node ?? ""]
            .contains { $0.lowercased().contains(text) }
    }
}

/// Unknown paths and Hummingbird's own errors as the API's JSON errors.
struct InspectorErrorMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do { return try await next(request, context) } catch let error as InspectorError { throw error } catch let error as SignInPage { throw error } catch let error as ServerError {
            // The generated server's: a handler's or a check's own error, or the runtime's (a
            // request its document does not decode).
            if let inner = error.underlyingError as? InspectorError { throw inner }
            if let inner = error.underlyingError as? ReceiverError { throw Self.problem(inner) }
            if let inner = error.underlyingError as? IdentityToolkitError { throw Self.problem(inner) }
            throw InspectorError(error.httpStatus, "\(error.operationID): \(error.causeDescription)")
        } catch let error as HTTPError {
            throw InspectorError(error.status, error.status == .notFound ? "no such path: \(request.uri.path) (the API is described at /api/v1/openapi.json)"
                                 : error.body ?? error.status.reasonPhrase)
        } catch is NIOTooManyBytesError {
            throw InspectorError(.contentTooLarge, "the body is too large")
        } catch let error as ReceiverError {
            throw Self.problem(error)
        } catch let error as IdentityToolkitError {
            throw Self.problem(error)
        }
    }

    /// The backend's failure with the status it answers its own API with: 503 when it cannot
    /// reach its state (the fleet's store, its journal), not the generated server's bare 500.
    /// Google's message for that says nothing of the cause, which the backend logs.
    private static func problem(_ error: IdentityToolkitError) -> InspectorError {
        guard error.httpStatus == 503 else { return InspectorError(HTTPResponse.Status(code: error.httpStatus), error.message) }
        return InspectorError(.serviceUnavailable, "the backend cannot read or keep its state now (the fleet's store or its journal; its log says why): try again")
    }

    /// A receiver's failure: 503 when its state cannot be kept (the fleet's store out of reach, a
    /// file that cannot be written: try again), else 500.
    private static func problem(_ error: ReceiverError) -> InspectorError {
        InspectorError(error.isUnavailable ? .serviceUnavailable : .internalServerError, error.message)
    }
}

