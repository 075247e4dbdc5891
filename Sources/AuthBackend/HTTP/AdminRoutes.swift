import Foundation
import HTTPTypes
import Hummingbird
import HTTPServerSupport
import IdentityToolkitAPI
import Utilities

/// The Admin SDKs' user management (`/identitytoolkit.googleapis.com/v1/projects/{p}/accounts…`)
/// and the Auth Emulator's own account reset, as the emulator serves them:
/// - an OAuth 2 bearer token is required: `Bearer owner` (what every Admin SDK sends an emulator)
///   or a Google access token (`ya29.…`, taken as the owner's, as the emulator does); none is 401
///   UNAUTHENTICATED, anything else 401 `Invalid Credentials`;
/// - with a deployment's admin token (``AdminAccess``, for a backend beyond loopback) that token,
///   or `owner` only from the owner networks (``BackendRouter``'s ``AdminAccessMiddleware``, which
///   guards the emulator's own routes too: ``isGuarded(_:)``);
/// - the project in the path must be this backend's (CONFIGURATION_NOT_FOUND otherwise);
/// - bodies are checked against the REST schema (``SchemaCheckedMessage``) before they are read.
enum AdminRoutes {
    static func add(to router: Router<BackendRequestContext>, toolkit: IdentityToolkit, access: AdminAccess, table: RouteMethods) {
        let projectID = toolkit.configuration.projectID
        let admin = router.group().add(middleware: AdminAuthMiddleware(projectID: projectID, access: access))

        admin.admin(SignUpNewUserRequest.self, at: .adminCreateAccount, what: "accounts (create)", table: table) {
            try await toolkit.adminCreateUser($0)
        }
        admin.admin(GetAccountInfoRequest.self, at: .adminLookup, what: "accounts:lookup", table: table) { try await toolkit.adminLookup($0) }
        admin.admin(SetAccountInfoRequest.self, at: .adminUpdate, what: "accounts:update", table: table) { try await toolkit.adminUpdate($0) }
        admin.admin(DeleteAccountRequest.self, at: .adminDelete, what: "accounts:delete", table: table) { try await toolkit.adminDelete($0) }
        admin.admin(BatchDeleteAccountsRequest.self, at: .adminBatchDelete, what: "accounts:batchDelete", table: table) {
            try await toolkit.adminBatchDelete($0)
        }
        admin.admin(QueryUserInfoRequest.self, at: .adminQuery, what: "accounts:query", table: table) { try await toolkit.adminQuery($0) }
        admin.post(RouterPath(route(IdentityToolkitEndpoint.adminBatchCreate.path))) { request, context in
            let body = try await request.body.collect(upTo: context.maxUploadSize)
            return try JSONBody(try await toolkit.adminBatchCreate(try UploadAccountRequest.checked(body.readableBytesView)))
        }
        table.add(IdentityToolkitEndpoint.adminBatchCreate.path, .post)
        admin.get(RouterPath(route(IdentityToolkitEndpoint.adminBatchGet.path))) { request, _ in
            let items = request.uri.queryItems
            for item in items where !["maxResults", "nextPageToken", "key", "alt", "prettyPrint"].contains(item.name) {
                throw IdentityToolkitError(.invalidArgument, "accounts:batchGet takes maxResults and nextPageToken, not \(item.name)")
            }
            return try JSONBody(try await toolkit.adminBatchGet(try DownloadAccountRequest(queryItems: items)))
        }
        table.add(IdentityToolkitEndpoint.adminBatchGet.path, .get)

        // The emulator's reset: every user goes.
        let accounts = "/emulator/v1/projects/{project}/accounts"
        router.delete(RouterPath(route(accounts))) { _, context in
            try checkProject(context, projectID)
            try await toolkit.deleteAllAccounts()
            return try JSONBody(EmptyResponse())
        }
        table.add(accounts, .delete)
    }

    /// The paths a deployment's admin token guards: the Admin SDKs' (`…/v1/projects/{p}/accounts…`)
    /// and the emulator's own (`/emulator/…`: the SMS and email outboxes, the config, the reset).
    @Sendable static func isGuarded(_ path: String) -> Bool {
        path.hasPrefix("/emulator/") || path.hasPrefix("/identitytoolkit.googleapis.com/v1/projects/")
            || path.hasPrefix("/identitytoolkit.googleapis.com/v2/projects/")
    }

    /// A path template's `{project}` as the router's `:project`.
    static func route(_ template: String) -> String { template.replacingOccurrences(of: "{project}", with: ":project") }

    /// The project in the path is this backend's.
    static func checkProject(_ context: BackendRequestContext, _ projectID: String) throws(IdentityToolkitError) {
        let asked = context.parameters.get("project") ?? ""
        guard asked == projectID else {
            throw IdentityToolkitError(.configurationNotFound,
                                       "this backend plays project \(projectID), not \(asked) (set the Admin SDK's projectId, or start authsim backend with --project-id \(asked))")
        }
    }
}

extension UploadAccountRequest {
    /// The body of a `batchCreate`, checked: the message's fields, then each user's (`users[i]`).
    /// `kind` is taken and ignored: the Auth Emulator's own import posts its export's
    /// `accounts.json` (a `batchGet` answer) as it is.
    static func checked(_ bytes: some Collection<UInt8>) throws(IdentityToolkitError) -> UploadAccountRequest {
        let object = try IdentityToolkitJSON.object(from: bytes, what: "accounts:batchCreate")
        try checkFields(of: object.filter { $0.key != "kind" && $0.key != "nextPageToken" }, what: "accounts:batchCreate")
        if case .array(let users)? = object["users"] {
            for (index, user) in users.enumerated() {
                if case .object(let fields) = user { try UserRecord.checkFields(of: fields, at: "users[\(index)]", what: "accounts:batchCreate") }
            }
        }
        return try IdentityToolkitJSON.decode(UploadAccountRequest.self, from: bytes)
    }
}

extension RouterGroup<BackendRequestContext> {
    /// An Admin POST endpoint: the project checked, the body schema-checked and decoded.
    func admin<Call: AuthRPCRequest & SchemaCheckedMessage>(_ type: Call.Type, at endpoint: IdentityToolkitEndpoint, what: String,
                                                              table: RouteMethods,
                                                              _ handle: @escaping @Sendable (Call) async throws -> Call.Response) {
        post(RouterPath(AdminRoutes.route(endpoint.path))) { request, context in
            let body = try await request.body.collect(upTo: context.maxUploadSize)
            let call = try IdentityToolkitJSON.decodeChecked(Call.self, from: body.readableBytesView, what: what)
            return try JSONBody(try await handle(call))
        }
        table.add(endpoint.path, .post)
    }
}

/// The Admin calls' credential and project: a bearer token (`owner`, or a Google access token),
/// and the path's project this backend's.
struct AdminAuthMiddleware: RouterMiddleware {
    typealias Context = BackendRequestContext
    let projectID: String
    let access: AdminAccess

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let authorization = request.headers[.authorization], authorization.lowercased().hasPrefix("bearer ") else {
            throw IdentityToolkitError.missingCredential()
        }
        let token = authorization.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces)
        guard token.lowercased() == "owner" || token.hasPrefix("ya29.") || access.token?.matches(token) == true else {
            throw IdentityToolkitError.invalidCredential()
        }
        try AdminRoutes.checkProject(context, projectID)
        return try await next(request, context)
    }
}
