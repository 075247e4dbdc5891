import Foundation
import HTTPTypes
import Hummingbird
import IdentityToolkitAPI
import NIOCore

/// One Identity Toolkit call, as one row of ``ToolkitCalls``: the operation events name it by,
/// the paths it is called at (every spelling: v3 `relyingparty`, v1 `accounts:…`, v2, the Admin
/// SDKs' `projects/{p}`), its request type (the answer's follows), how its body is read, and the
/// rule it runs. The router, the 405 table, the table's tests and the actor's typed entry
/// (``IdentityToolkit/call(_:_:headers:)``) are all made from the row; nothing else declares a call.
///
/// The emulator keeps its calls the same way (firebase-tools `src/emulator/auth/operations.ts`,
/// `authOperations`: a path, a schema, a handler per call).
package struct ToolkitCall<Call: AuthRPCRequest>: Sendable {
    /// What events, timelines and `explain` call it.
    package let operation: BackendOperation
    /// Its paths, each with its HTTP method; the first is the SDK's.
    package let endpoints: [IdentityToolkitEndpoint]
    let reading: CallReading<Call>
    let rule: CallRule<Call>

    init(_ operation: BackendOperation, _ type: Call.Type, at endpoints: [IdentityToolkitEndpoint], reading: CallReading<Call>,
         _ rule: CallRule<Call>) {
        precondition(!endpoints.isEmpty, "\(operation) has no path")
        self.operation = operation
        self.endpoints = endpoints
        self.reading = reading
        self.rule = rule
    }

    /// The name its errors give (`accounts:signInWithPassword`): the current API's spelling, else its first path's.
    var name: String {
        (endpoints.first { $0.service == .v1 || $0.service == .v1Project || $0.service == .v2 } ?? endpoints[0]).name
    }
}

/// How a call's request is read from HTTP: which methods its paths answer, and how the body (or
/// the query) becomes the typed request.
struct CallReading<Call: AuthRPCRequest>: Sendable {
    /// How strict the reading is, as the table's tests and `docs/backend.md` name it.
    enum Style: String, Sendable {
        /// Any JSON object; fields the type lacks are ignored (as the SDK's own parser does).
        case lenient
        /// Field names held to the schema (an unknown name is 400 `Unknown name`, as Google's front
        /// end answers); which fields are implemented is the rule's to say.
        case knownFields = "known fields"
        /// Field names held to the schema, and a field the backend does not implement refused by name.
        case checked
        /// A GET whose request is its query.
        case query
        /// A reading of its own (a form or JSON, an allowed query, a nested check).
        case special
    }

    let style: Style
    /// The methods every path answers; nil: each endpoint's own.
    let methods: [IdentityToolkitEndpoint.Method]?
    /// The request from the HTTP request, its body (empty for a GET), the path it came by and the call's name.
    let read: @Sendable (Request, ByteBuffer, IdentityToolkitEndpoint, String) throws(IdentityToolkitError) -> Call

    init(_ style: Style, methods: [IdentityToolkitEndpoint.Method]? = nil,
         _ read: @escaping @Sendable (Request, ByteBuffer, IdentityToolkitEndpoint, String) throws(IdentityToolkitError) -> Call) {
        self.style = style
        self.methods = methods
        self.read = read
    }

    /// Any JSON object of the request's fields.
    static var lenient: Self {
        Self(.lenient) { _, body, _, _ throws(IdentityToolkitError) in try IdentityToolkitJSON.decode(Call.self, from: body.readableBytesView) }
    }
}

extension CallReading where Call: SchemaCheckedMessage {
    /// Field names held to the schema (the path's own name in the error).
    static var knownFields: Self {
        Self(.knownFields) { _, body, endpoint, _ throws(IdentityToolkitError) in
            try IdentityToolkitJSON.decodeKnownFields(Call.self, from: body.readableBytesView, what: endpoint.name)
        }
    }

    /// Field names held to the schema, unimplemented fields refused by name.
    static var checked: Self {
        Self(.checked) { _, body, _, name throws(IdentityToolkitError) in
            try IdentityToolkitJSON.decodeChecked(Call.self, from: body.readableBytesView, what: name)
        }
    }
}

extension CallReading where Call: AuthRPCQueryRequest {
    /// The request's query.
    static var query: Self {
        Self(.query) { request, _, _, _ throws(IdentityToolkitError) in try Call(queryItems: request.uri.queryItems) }
    }
}

/// What a call runs, and so how the actor keeps it: a rule that only reads, one that changes the
/// state (its records kept before the answer), one that grants tokens (signed after the change,
/// off the actor), or work of the actor's own around its rules (a silent push, a password hash).
enum CallRule<Call: AuthRPCRequest>: Sendable {
    typealias Rule<Answer> = @Sendable (inout CoreCall, Call) throws(IdentityToolkitError) -> Answer

    case read(Rule<Call.Response>)
    case change(Rule<Call.Response>)
    case signIn(Rule<SignInDecision<Call.Response>>)
    /// The request's headers too (`X-Firebase-Locale`).
    case actor(@Sendable (IdentityToolkit, Call, HTTPFields) async throws(IdentityToolkitError) -> Call.Response)

    var access: CallAccess {
        switch self {
        case .read: .read
        case .change: .change
        case .signIn: .signIn
        case .actor: .actor
        }
    }
}

/// How a call reaches the state (``CallRule``), as the table's tests and the docs name it.
package enum CallAccess: String, Sendable {
    case read, change, signIn = "sign-in", actor
}

extension IdentityToolkit {
    /// Runs one call of ``ToolkitCalls`` for a Swift caller (a test, the inspector, a scenario), as
    /// its route runs it.
    package func call<Call>(_ row: ToolkitCall<Call>, _ request: Call, headers: HTTPFields = [:]) async throws(IdentityToolkitError) -> Call.Response {
        switch row.rule {
        case .read(let rule): try await read { core throws(IdentityToolkitError) in try rule(&core, request) }
        case .change(let rule): try await change { core throws(IdentityToolkitError) in try rule(&core, request) }
        case .signIn(let rule): try await signIn { core throws(IdentityToolkitError) in try rule(&core, request) }
        case .actor(let run): try await run(self, request, headers)
        }
    }
}

/// A row with its types erased: what the router and the table's tests read.
package protocol ServedCall: Sendable {
    var operation: BackendOperation { get }
    var endpoints: [IdentityToolkitEndpoint] { get }
    /// Each path with the methods it answers.
    var routes: [(path: String, methods: [IdentityToolkitEndpoint.Method])] { get }
    var access: CallAccess { get }
    /// How its body is read (`lenient`, `known fields`, `checked`, `query`, `special`).
    var readingStyle: String { get }
    /// Whether it is the Admin SDKs' (`…/v1/projects/{p}/…`: a bearer token, not an API key).
    var isAdmin: Bool { get }
    /// The fields of its request's schema (none for a request read its own way).
    var schemaFields: Set<String> { get }
    /// Reads `body` (and a query, for a GET) as its route reads a request at its first path: the
    /// request, or the error the route answers (the fuzz targets' seam: hostile bytes go through
    /// exactly the reading a client's do).
    func read(body: [UInt8], query: String, contentType: String) throws(IdentityToolkitError)
}

extension ToolkitCall: ServedCall {
    package var routes: [(path: String, methods: [IdentityToolkitEndpoint.Method])] {
        endpoints.map { ($0.path, reading.methods ?? [$0.method]) }
    }
    package var access: CallAccess { rule.access }
    package var readingStyle: String { reading.style.rawValue }
    package var isAdmin: Bool { endpoints.allSatisfy { [.v1Project, .v1Tenant, .v2Project].contains($0.service) } }
    package var schemaFields: Set<String> { (Call.self as? any SchemaCheckedMessage.Type)?.schemaFields ?? [] }

    package func read(body: [UInt8], query: String, contentType: String) throws(IdentityToolkitError) {
        let endpoint = endpoints[0]
        let method = (reading.methods ?? [endpoint.method])[0]
        var fields = HTTPFields()
        fields[.contentType] = contentType
        let head = HTTPRequest(method: HTTPRequest.Method(rawValue: method.rawValue)!, scheme: "http", authority: "127.0.0.1",
                               path: "/\(endpoint.path)\(query.isEmpty ? "" : "?\(query)")", headerFields: fields)
        _ = try reading.read(Request(head: head, body: RequestBody(buffer: ByteBuffer(bytes: body))), ByteBuffer(bytes: body), endpoint, name)
    }
}

/// What registers a row on a router (kept apart from the public ``ServedCall``: it names the
/// router's types).
protocol RoutableCall: ServedCall {
    func route(on group: RouterGroup<BackendRequestContext>, toolkit: IdentityToolkit, table: RouteMethods)
}

extension ToolkitCall: RoutableCall {
    /// Every path, with each of its methods: the body read as the row says (a path's tenant is
    /// the request's, and a body that names another is TENANT_ID_MISMATCH, as the Auth Emulator
    /// checks), the call run, the answer as JSON.
    func route(on group: RouterGroup<BackendRequestContext>, toolkit: IdentityToolkit, table: RouteMethods) {
        let name = name
        for endpoint in endpoints {
            let namesTenant = endpoint.path.contains("{tenant}")
            for method in reading.methods ?? [endpoint.method] {
                group.on(RouterPath(AdminRoutes.route(endpoint.path)), method: HTTPRequest.Method(rawValue: method.rawValue)!) { request, context in
                    let body = method == .get ? ByteBuffer() : try await request.body.collect(upTo: context.maxUploadSize)
                    var call = try reading.read(request, body, endpoint, name)
                    if namesTenant, let tenant = context.parameters.get("tenant") {
                        if let given = call.tenantId, !given.isEmpty, given != tenant {
                            throw IdentityToolkitError(.tenantIDMismatch, "the body names tenant \(given), the path \(tenant)")
                        }
                        call.tenantId = tenant
                    }
                    return try JSONBody(try await toolkit.call(self, call, headers: request.headers))
                }
                table.add(endpoint.path, method)
            }
        }
    }
}
