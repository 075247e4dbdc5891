import Foundation
import HTTPTypes
import Hummingbird
import HTTPServerSupport
import IdentityToolkitAPI
import Utilities

/// What guards the Admin SDKs' user management (`/identitytoolkit.googleapis.com/v1/projects/{p}/accounts…`,
/// rows of ``ToolkitCalls``) and the Auth Emulator's own account reset, as the emulator serves them:
/// - an OAuth 2 bearer token is required: `Bearer owner` (what every Admin SDK sends an emulator)
///   or a Google access token (`ya29.…`, taken as the owner's, as the emulator does); none is 401
///   UNAUTHENTICATED, anything else 401 `Invalid Credentials`;
/// - with a deployment's admin token (``AdminAccess``, for a backend beyond loopback) that token,
///   or `owner` only from the owner networks (``BackendRouter``'s ``AdminAccessMiddleware``, which
///   guards the emulator's own routes too: ``isGuarded(_:)``);
/// - the project in the path must be this backend's (CONFIGURATION_NOT_FOUND otherwise);
/// - bodies are checked against the REST schema (``SchemaCheckedMessage``) before they are read.
enum AdminRoutes {
    /// The emulator's own reset (the Admin SDKs' calls are rows of ``ToolkitCalls``, on a group
    /// behind ``AdminAuthMiddleware``).
    static func add(to router: Router<BackendRequestContext>, toolkit: IdentityToolkit, table: RouteMethods) {
        let projectID = toolkit.configuration.projectID
        // The emulator's reset: every user of the project, or of one tenant, goes.
        for accounts in ["/emulator/v1/projects/{project}/accounts", "/emulator/v1/projects/{project}/tenants/{tenant}/accounts"] {
            router.delete(RouterPath(route(accounts))) { _, context in
                try checkProject(context, projectID)
                try await toolkit.deleteAllAccounts(tenant: context.parameters.get("tenant"))
                return try JSONBody(EmptyResponse())
            }
            table.add(accounts, .delete)
        }
    }

    /// The paths a deployment's admin token guards: the Admin SDKs' (`…/v1/projects/{p}/accounts…`)
    /// and the emulator's own (`/emulator/…`: the SMS and email outboxes, the config, the reset).
    @Sendable static func isGuarded(_ path: String) -> Bool {
        path.hasPrefix("/emulator/") || path.hasPrefix("/identitytoolkit.googleapis.com/v1/projects/")
            || path.hasPrefix("/identitytoolkit.googleapis.com/v2/projects/")
    }

    /// A path template's `{project}` and `{tenant}` as the router's `:project` and `:tenant`.
    static func route(_ template: String) -> String {
        template.replacingOccurrences(of: "{project}", with: ":project").replacingOccurrences(of: "{tenant}", with: ":tenant")
    }

    /// The project in the path is this backend's.
    static func checkProject(_ context: BackendRequestContext, _ projectID: String) throws(IdentityToolkitError) {
        let asked = context.parameters.get("project") ?? ""
        guard asked == projectID else {
            throw IdentityToolkitError(.configurationNotFound,
                                       "this backend plays project \(projectID), not \(asked) (set the Admin SDK's projectId, or start authsim backend with --project-id \(asked))")
        }
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
