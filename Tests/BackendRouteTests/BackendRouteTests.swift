@testable import AuthBackend
import Foundation
import Hummingbird
import HummingbirdTesting
import IdentityToolkitAPI
import Testing
import Utilities

/// The backend's routes, in process through Hummingbird's router test framework: which route takes
/// what, the API-key middleware, and every error in Google's envelope.
@Suite("The backend's routes")
struct BackendRouteTests {
    let toolkit: IdentityToolkit
    let key: String

    init() throws {
        var configuration = BackendConfiguration()
        configuration.testPhoneNumbers = ["+16505553434": "654321"]
        toolkit = try IdentityToolkit(configuration: configuration, pusher: nil)
        key = configuration.apiKey
    }

    var app: some ApplicationProtocol { Application(router: BackendRouter.make(toolkit: toolkit)) }

    static let v3 = "/www.googleapis.com/identitytoolkit/v3/relyingparty"

    // The front end's answers as real clients have logged them (firebase-ios-sdk#1941, flutter#28631).
    @Test("a project configured with its API key: missing is 403 PERMISSION_DENIED, wrong is 400 INVALID_ARGUMENT with ErrorInfo API_KEY_INVALID, by query or x-goog-api-key")
    func apiKey() async throws {
        var configuration = BackendConfiguration()
        configuration.apiKeyCheck = .projectKey
        let keyed = Application(router: BackendRouter.make(toolkit: try IdentityToolkit(configuration: configuration, pusher: nil)))
        try await keyed.test(.router) { client in
            try await client.execute(uri: "\(Self.v3)/verifyClient", method: .post, body: json("{}")) { response in
                #expect(response.status == .forbidden)
                #expect(envelope(response)?.message == "The request is missing a valid API key.")
                #expect(envelope(response)?.errors?.first?.reason == "forbidden")
                #expect(envelope(response)?.status == "PERMISSION_DENIED")
            }
            try await client.execute(uri: "\(Self.v3)/verifyClient?key=nope", method: .post, body: json("{}")) { response in
                #expect(response.status == .badRequest)
                #expect(envelope(response)?.message == "API key not valid. Please pass a valid API key.")
                #expect(envelope(response)?.errors?.first?.reason == "badRequest")
                #expect(envelope(response)?.status == "INVALID_ARGUMENT")
                #expect(envelope(response)?.details?.first?.reason == "API_KEY_INVALID")
                #expect(envelope(response)?.details?.first?.type == "type.googleapis.com/google.rpc.ErrorInfo")
            }
            try await client.execute(uri: "\(Self.v3)/verifyClient", method: .post, headers: [.init("x-goog-api-key")!: key],
                                     body: json("{}")) { response in
                #expect(envelope(response)?.message == "MISSING_IOS_APP_TOKEN")
            }
        }
    }

    // The Auth Emulator takes any non-empty key (firebase-tools src/emulator/auth/server.ts,
    // getProjectIdByApiKey) and refuses a missing one as the service does.
    @Test("by default any non-empty API key is taken, as the Auth Emulator takes it; a missing or empty one is still 403")
    func anyAPIKey() async throws {
        #expect(BackendConfiguration().apiKeyCheck == .anyKey)
        try await app.test(.router) { client in
            for given in ["fake-api-key", "x", key] {
                try await client.execute(uri: "\(Self.v3)/verifyClient?key=\(given)", method: .post, body: json("{}")) { response in
                    #expect(envelope(response)?.message == "MISSING_IOS_APP_TOKEN", "key \(given)")
                }
            }
            for uri in ["\(Self.v3)/verifyClient", "\(Self.v3)/verifyClient?key="] {
                try await client.execute(uri: uri, method: .post, body: json("{}")) { response in
                    #expect(response.status == .forbidden, "\(uri)")
                }
            }
        }
    }

    // Google answers a client's lookup with the hash redacted and no salt (the SDK reads only that a
    // hash is there: User.swift 1371, hasEmailPasswordCredential); an admin's lookup keeps both.
    @Test("accounts:lookup with the user's own ID token: passwordHash redacted as Google's UkVEQUNURUQ=, no salt; the admin's lookup keeps them")
    func lookupRedactsPasswordHash() async throws {
        let created = try await toolkit.signUp(SignUpNewUserRequest(email: "ada@example.com", password: "correct horse", returnSecureToken: true))
        let idToken = created.idToken
        let own = try #require(try await toolkit.call(ToolkitCalls.getAccountInfo, GetAccountInfoRequest(idToken: idToken)).users?.first)
        #expect(own.passwordHash == "UkVEQUNURUQ=" && own.salt == nil)
        let admin = try #require(try await toolkit.call(ToolkitCalls.adminLookup, GetAccountInfoRequest(localId: [own.localId])).users?.first)
        #expect(admin.passwordHash != nil && admin.passwordHash != "UkVEQUNURUQ=" && admin.salt != nil)
        let anonymous = try await toolkit.signUp(SignUpNewUserRequest(returnSecureToken: true))
        let none = try #require(try await toolkit.call(ToolkitCalls.getAccountInfo, GetAccountInfoRequest(idToken: anonymous.idToken)).users?.first)
        #expect(none.passwordHash == nil && none.salt == nil, "no password, no hash")
    }

    // AdminActionTests starts its clock at Date(), a fractional second: a sign-in in a second's
    // last half millisecond was sealed rounded up, so refreshed tokens said auth_time + 1.
    @Test("a refreshed token's auth_time is the sign-in's, whatever the fraction of the second it happened in",
          arguments: [0.0, 0.4, 0.5, 0.9994, 0.9996, 0.99999])
    func refreshedAuthTime(fraction: Double) async throws {
        var configuration = BackendConfiguration()
        configuration.testPhoneNumbers = ["+16505553434": "654321"]
        let clock = ManualWallClock(Date(timeIntervalSince1970: 1_800_000_000 + fraction))
        let toolkit = try IdentityToolkit(configuration: configuration, pusher: nil, clock: clock)
        let session = try await toolkit.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: "+16505553434"))
        let signedIn = try await toolkit.call(ToolkitCalls.signInWithPhoneNumber, VerifyPhoneNumberRequest(sessionInfo: session.sessionInfo, code: "654321"))
        let firstToken = try #require(signedIn.idToken)
        let first = try #require(toolkit.tokenSigner.verifiedClaims(firstToken, now: clock.now))
        clock.advance(by: 1800)
        let refreshed = try await toolkit.secureToken(SecureTokenRequest(grantType: "refresh_token", refreshToken: signedIn.refreshToken))
        let secondToken = try #require(refreshed.idToken)
        let second = try #require(toolkit.tokenSigner.verifiedClaims(secondToken, now: clock.now))
        #expect(first.authTime == 1_800_000_000 && second.authTime == 1_800_000_000)
    }

    @Test("unknown paths are 404, a known path asked with another method 405, both in the envelope")
    func notFoundAndMethod() async throws {
        try await app.test(.router) { client in
            try await client.execute(uri: "/identitytoolkit.googleapis.com/v1/accounts:nothing?key=\(key)", method: .post, body: json("{}")) { response in
                #expect(response.status == .notFound)
                #expect(envelope(response)?.message == "NOT_FOUND : no such endpoint: /identitytoolkit.googleapis.com/v1/accounts:nothing")
            }
            try await client.execute(uri: "\(Self.v3)/verifyClient?key=\(key)", method: .get) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(envelope(response)?.message.hasPrefix("METHOD_NOT_ALLOWED : /www.googleapis.com/identitytoolkit/v3/relyingparty/verifyClient takes POST") == true)
            }
            try await client.execute(uri: "/emulator/v1/projects/any-project/verificationCodes", method: .post) { response in
                #expect(response.status == .methodNotAllowed)
            }
        }
    }

    @Test("a body over the limit is 413 (it was cut silently before); malformed JSON and wrong types name the problem")
    func bodies() async throws {
        try await app.test(.router) { client in
            let huge = "{\"phoneNumber\":\"" + String(repeating: "1", count: BackendRouter.maximumBodyBytes) + "\"}"
            try await client.execute(uri: "\(Self.v3)/sendVerificationCode?key=\(key)", method: .post, body: json(huge)) { response in
                #expect(response.status == .contentTooLarge)
                #expect(envelope(response)?.message.hasPrefix("PAYLOAD_TOO_LARGE") == true)
            }
            try await client.execute(uri: "\(Self.v3)/sendVerificationCode?key=\(key)", method: .post, body: json("{\"phone")) { response in
                #expect(response.status == .badRequest)
                // Google's front end answers it, as for an unknown field: no service code, INVALID_ARGUMENT.
                #expect(envelope(response)?.message.hasPrefix("Invalid JSON payload received.") == true)
                #expect(envelope(response)?.status == "INVALID_ARGUMENT")
            }
            try await client.execute(uri: "\(Self.v3)/verifyClient?key=\(key)", method: .post,
                                     body: json(#"{"appToken":"AB","isSandbox":"yes"}"#)) { response in
                #expect(response.status == .badRequest)
                #expect(envelope(response)?.message.contains("isSandbox") == true)
            }
        }
    }

    @Test("a test number signs in through the v1 and v3 paths alike; the outbox and getProjectConfig (GET and POST) answer")
    func endpoints() async throws {
        try await app.test(.router) { client in
            let sessionInfo = try await client.execute(uri: "/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode?key=\(key)",
                                                       method: .post, body: json(#"{"phoneNumber":"+16505553434"}"#)) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json; charset=UTF-8")
                return try IdentityToolkitJSON.decode(SendVerificationCodeResponse.self, from: response.body.readableBytesView).sessionInfo
            }
            let body = try IdentityToolkitJSON.encode(VerifyPhoneNumberRequest(sessionInfo: sessionInfo, code: "654321"))
            try await client.execute(uri: "\(Self.v3)/verifyPhoneNumber?key=\(key)", method: .post, body: ByteBuffer(bytes: body)) { response in
                let answer = try IdentityToolkitJSON.decode(VerifyPhoneNumberResponse.self, from: response.body.readableBytesView)
                #expect(answer.phoneNumber == "+16505553434")
                #expect(answer.isNewUser == true)
                #expect(answer.expiresIn == "3600")
            }
            for method in [HTTPRequest.Method.get, .post] {
                try await client.execute(uri: "\(Self.v3)/getProjectConfig?key=\(key)", method: method, body: method == .post ? json("{}") : nil) { response in
                    let config = try IdentityToolkitJSON.decode(GetProjectConfigResponse.self, from: response.body.readableBytesView)
                    #expect(config.authorizedDomains?.contains("authsim-demo.firebaseapp.com") == true)
                }
            }
            try await client.execute(uri: "/emulator/v1/projects/authsim-demo/verificationCodes", method: .get) { response in
                // Test numbers get no SMS.
                let outbox = try IdentityToolkitJSON.decode(VerificationCodesResponse.self, from: response.body.readableBytesView)
                #expect(outbox.verificationCodes == [])
            }
        }
    }

    private func json(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    /// The answer's error envelope (`nil` when it is not one: the expectation then fails).
    private func envelope(_ response: TestResponse) -> ErrorResponse.Body? {
        try? IdentityToolkitJSON.decode(ErrorResponse.self, from: response.body.readableBytesView).error
    }
}
