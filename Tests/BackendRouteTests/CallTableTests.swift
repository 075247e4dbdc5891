@testable import AuthBackend
import Foundation
import Hummingbird
import HummingbirdTesting
import IdentityToolkitAPI
import Testing
import Utilities

/// The table of Identity Toolkit calls (`Calls/ToolkitCalls.swift`) and what is made from it: every
/// row reaches its rule under each of its paths, with the reading it names, on a server listening
/// on a port; nothing else routes a call. One row's server at a time: 60 live servers at once on a
/// loaded 2-core machine left a request unread past HummingbirdTesting's fixed 20 s read timeout.
@Suite("The table of Identity Toolkit calls", .serialized)
struct CallTableTests {
    let toolkit: IdentityToolkit
    let key: String

    init() throws {
        toolkit = try IdentityToolkit(configuration: BackendConfiguration(), pusher: nil)
        key = toolkit.configuration.apiKey
    }

    var app: some ApplicationProtocol { Application(router: BackendRouter.make(toolkit: toolkit), configuration: .init(address: .hostname("127.0.0.1", port: 0))) }

    /// The path as a client calls it: the project filled in, the key or the Admin SDKs' bearer token.
    func request(_ call: any ServedCall, _ path: String) -> (uri: String, headers: HTTPFields) {
        let uri = path.replacingOccurrences(of: "{project}", with: toolkit.configuration.projectID)
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
        try await app.test(.live) { client in
            for route in call.routes {
                let (uri, headers) = request(call, route.path)
                for method in route.methods {
                    let body = method == .get ? nil : ByteBuffer(string: "{}")
                    try await client.execute(uri: uri, method: .init(rawValue: method.rawValue)!, headers: headers, body: body) { response in
                        #expect(![404, 405].contains(response.status.code), "\(method) \(route.path): \(response.status) \(String(buffer: response.body))")
                        if response.status != .ok {
                            #expect((try? IdentityToolkitJSON.decode(ErrorResponse.self, from: response.body.readableBytesView)) != nil,
                                    "\(method) \(route.path): not Google's envelope")
                        }
                    }
                }
                if !route.methods.contains(.delete) {
                    try await client.execute(uri: uri, method: .delete, headers: headers) { response in
                        #expect(response.status == .methodNotAllowed, "DELETE \(route.path)")
                    }
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
        try await app.test(.live) { client in
            for route in call.routes where route.methods.contains(.post) {
                let (uri, headers) = request(call, route.path)
                try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: #"{"colour":"blue"}"#)) { response in
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
