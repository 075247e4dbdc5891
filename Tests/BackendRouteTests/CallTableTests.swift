@testable import AuthBackend
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import ServiceLifecycle
import IdentityToolkitAPI
import Testing
import Utilities

/// The table of Identity Toolkit calls (`Calls/ToolkitCalls.swift`) and what is made from it: every
/// row reaches its rule under each of its paths, with the reading it names, on a server listening
/// on a port; nothing else routes a call. One row's server at a time, and a client whose read
/// timeout bounds a hang, not the machine: HummingbirdTesting's `.live` client gives up after a
/// fixed 20 s without a read, which a suite on two busy cores once exceeded (CI, `.verifyClient`).
@Suite("The table of Identity Toolkit calls", .serialized)
struct CallTableTests {
    let toolkit: IdentityToolkit
    let key: String

    init() throws {
        toolkit = try IdentityToolkit(configuration: BackendConfiguration(), pusher: nil)
        key = toolkit.configuration.apiKey
    }

    /// The table's router on a port, and a client of it, for `body`; stopped after.
    func live(_ body: @Sendable (TestClient) async throws -> Void) async throws {
        let (ports, portSent) = AsyncStream.makeStream(of: Int.self)
        let app = Application(router: BackendRouter.make(toolkit: toolkit), configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { portSent.yield($0.localAddress?.port ?? 0) })
        let group = ServiceGroup(configuration: .init(services: [app], logger: Logger(label: "call-table")))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var next = ports.makeAsyncIterator()
            let port = try #require(await next.next())
            let client = TestClient(host: "127.0.0.1", port: port, configuration: .init(timeout: .seconds(300)))
            client.connect()
            do { try await body(client) } catch {
                try? await client.shutdown()
                await group.triggerGracefulShutdown()
                throw error
            }
            try await client.shutdown()
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    /// One request; the answer's status and body.
    func send(_ client: TestClient, _ uri: String, _ method: HTTPRequest.Method, _ headers: HTTPFields, _ body: ByteBuffer? = nil) async throws
        -> (status: HTTPResponse.Status, body: ByteBuffer) {
        let response = try await client.execute(.init(uri, method: method, authority: "127.0.0.1", headers: headers, body: body))
        return (response.head.status, response.body ?? ByteBuffer())
    }

    /// The path as a client calls it: the project (and a tenant) filled in, the key or the Admin SDKs' bearer token.
    func request(_ call: any ServedCall, _ path: String) -> (uri: String, headers: HTTPFields) {
        let uri = path.replacingOccurrences(of: "{project}", with: toolkit.configuration.projectID)
            .replacingOccurrences(of: "{tenant}", with: "tenant-1")
        return call.isAdmin ? (uri, [.authorization: "Bearer owner", .contentType: "application/json"])
            : ("\(uri)?key=\(key)", [.contentType: "application/json"])
    }

    @Test("one row per operation, each with a distinct set of paths")
    func oneRowEach() {
        let operations = ToolkitCalls.all.map(\.operation)
        #expect(operations.count == Set(operations).count, "an operation has two rows")
        #expect(Set(operations) == Set(BackendOperation.allCases), "operations without a row: \(Set(BackendOperation.allCases).subtracting(operations))")
        let paths = ToolkitCalls.all.flatMap { $0.routes.flatMap { route in route.methods.map { "\($0) \(route.path)" } } }
        #expect(paths.count == Set(paths).count, "a path and method in two rows")
        // Every path the SDK's request types name is a row's (the app side cannot call what is not served).
        let sdkEndpoints: [IdentityToolkitEndpoint] = [
            VerifyClientRequest.endpoint, SendVerificationCodeRequest.endpoint, VerifyPhoneNumberRequest.endpoint, GetProjectConfigRequest.endpoint,
            GetRecaptchaConfigRequest.endpoint, VerifyAssertionRequest.endpoint, RevokeTokenRequest.endpoint, DeleteAccountRequest.endpoint,
            SetAccountInfoRequest.endpoint, GetAccountInfoRequest.endpoint, StartMFAEnrollmentRequest.endpoint, FinalizeMFAEnrollmentRequest.endpoint,
            WithdrawMFARequest.endpoint, StartMFASignInRequest.endpoint, FinalizeMFASignInRequest.endpoint, VerifyPasswordRequest.endpoint,
            GetOOBConfirmationCodeRequest.endpoint, ResetPasswordRequest.endpoint, CreateAuthURIRequest.endpoint, SignUpNewUserRequest.endpoint,
            VerifyCustomTokenRequest.endpoint, SecureTokenRequest.endpoint,
        ]
        let served = Set(ToolkitCalls.all.flatMap(\.endpoints))
        #expect(sdkEndpoints.filter { !served.contains($0) }.isEmpty)
    }

    /// An empty object reaches each row's rule (the answer is the rule's: its refusal in Google's
    /// envelope, or an answer), never the router's 404 or 405.
    @Test("every path of every row reaches its rule with each of its methods; another method is 405", arguments: ToolkitCalls.all.map(\.operation))
    func everyPathRouted(_ operation: BackendOperation) async throws {
        let call = try #require(ToolkitCalls.all.first { $0.operation == operation })
        try await live { client in
            for route in call.routes {
                let (uri, headers) = request(call, route.path)
                for method in route.methods {
                    let body = method == .get ? nil : ByteBuffer(string: "{}")
                    let response = try await send(client, uri, try #require(HTTPRequest.Method(method.rawValue)), headers, body)
                    #expect(![404, 405].contains(response.status.code), "\(method) \(route.path): \(response.status) \(String(buffer: response.body))")
                    if response.status != .ok {
                        #expect((try? IdentityToolkitJSON.decode(ErrorResponse.self, from: response.body.readableBytesView)) != nil,
                                "\(method) \(route.path): not Google's envelope")
                    }
                }
                // A path another row answers with DELETE (a tenant's get, patch and delete) is that row's.
                let deletes = ToolkitCalls.all.contains { $0.routes.contains { $0.path == route.path && $0.methods.contains(.delete) } }
                if !deletes {
                    #expect(try await send(client, uri, .delete, headers).status == .methodNotAllowed, "DELETE \(route.path)")
                }
            }
        }
    }

    /// What the row's reading says about an unknown field, by every path: `known fields` and
    /// `checked` refuse it by name (Google's front end's `Unknown name`); `lenient` takes it.
    @Test("each row's reading holds to its style under every path: an unknown field named, or taken", arguments: ToolkitCalls.all.map(\.operation))
    func readingStyle(_ operation: BackendOperation) async throws {
        let call = try #require(ToolkitCalls.all.first { $0.operation == operation })
        guard ["known fields", "checked", "lenient"].contains(call.readingStyle) else { return }
        try await live { client in
            for route in call.routes where route.methods.contains(.post) {
                let (uri, headers) = request(call, route.path)
                let response = try await send(client, uri, .post, headers, ByteBuffer(string: #"{"colour":"blue"}"#))
                let error = try? IdentityToolkitJSON.decode(ErrorResponse.self, from: response.body.readableBytesView).error
                if call.readingStyle == "lenient" {
                    #expect(error?.message.contains("colour") != true, "\(route.path) refused a field a lenient reading takes")
                } else {
                    #expect(response.status == .badRequest, "\(route.path)")
                    #expect(error?.message.contains(#"Unknown name "colour""#) == true, "\(route.path): \(error?.message ?? String(buffer: response.body))")
                }
            }
        }
    }

    /// A row served under a tenant's path takes the tenant into its request (its `tenantId`), so
    /// its rule runs in that tenant: a message without the field would drop it silently.
    @Test("every row served under a tenant's path has a request that carries the tenant")
    func tenantPathsCarryTheTenant() throws {
        func carries<Call: AuthRPCRequest>(_ row: ToolkitCall<Call>, _ sample: Call) -> Bool {
            var request = sample
            request.tenantId = "tenant-1"
            return request.tenantId == "tenant-1"
        }
        #expect(carries(ToolkitCalls.adminCreateUser, SignUpNewUserRequest()))
        #expect(carries(ToolkitCalls.adminLookup, GetAccountInfoRequest(idToken: nil)))
        #expect(carries(ToolkitCalls.adminUpdate, SetAccountInfoRequest(localId: "u")))
        #expect(carries(ToolkitCalls.adminDelete, DeleteAccountRequest(idToken: nil)))
        #expect(carries(ToolkitCalls.adminBatchDelete, BatchDeleteAccountsRequest(localIds: [], force: nil)))
        #expect(carries(ToolkitCalls.adminQuery, QueryUserInfoRequest()))
        #expect(carries(ToolkitCalls.adminBatchCreate, UploadAccountRequest(users: [])))
        #expect(carries(ToolkitCalls.adminBatchGet, DownloadAccountRequest()))
        #expect(carries(ToolkitCalls.adminSendOobCode, GetOOBConfirmationCodeRequest(requestType: .passwordReset)))
        #expect(carries(ToolkitCalls.getTenant, GetTenantRequest(tenantId: nil)))
        #expect(carries(ToolkitCalls.updateTenant, UpdateTenantRequest(tenantId: nil, tenant: TenantConfig(), updateMask: nil)))
        #expect(carries(ToolkitCalls.deleteTenant, DeleteTenantRequest(tenantId: nil)))
        let tenantRows = ToolkitCalls.all.filter { $0.endpoints.contains { $0.path.contains("{tenant}") } }.map(\.operation)
        #expect(Set(tenantRows) == [.adminCreateUser, .adminLookup, .adminUpdate, .adminDelete, .adminBatchDelete, .adminQuery, .adminBatchCreate,
                                    .adminBatchGet, .adminSendOobCode, .getTenant, .updateTenant, .deleteTenant], "a new row under a tenant's path: add it above")
    }

    @Test("a Swift caller runs a row as its route does: the same rule, the same refusal")
    func swiftCaller() async throws {
        await #expect(throws: IdentityToolkitError.self) { _ = try await toolkit.call(ToolkitCalls.deleteAccount, DeleteAccountRequest(idToken: "nope")) }
        let signedUp = try await toolkit.call(ToolkitCalls.signUp, SignUpNewUserRequest())
        let looked = try await toolkit.call(ToolkitCalls.adminLookup, GetAccountInfoRequest(localId: [try #require(signedUp.localId)]))
        #expect(looked.users?.first?.localId == signedUp.localId)
        #expect(ToolkitCalls.signUp.access == .actor && ToolkitCalls.adminLookup.access == .change && ToolkitCalls.recaptchaConfig.access == .read)
    }
}
