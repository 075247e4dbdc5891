@testable import AuthBackend
import Foundation
import Hummingbird
import HummingbirdTesting
import IdentityToolkitAPI
import Testing
import TestSupport

/// The Auth Emulator's own endpoints and the Admin routes' edges, in process (the Admin SDK drives
/// the rest from outside: AdminSDKTests). Behaviour as firebase-tools `src/emulator/auth/operations.ts`
/// (`deleteAllAccountsInProject`, `updateEmulatorProjectConfig`, `batchCreate`, `batchGet`).
@Suite("The emulator's endpoints and the Admin routes' edges")
struct EmulatorEndpointTests {
    static let admin = "/identitytoolkit.googleapis.com/v1/projects/authsim-demo"
    static let owner: HTTPFields = [.authorization: "Bearer owner", .contentType: "application/json"]

    func post(_ client: some TestClientProtocol, _ path: String, _ body: String, headers: HTTPFields = owner) async throws -> (Int, String) {
        try await client.execute(uri: path, method: .post, headers: headers, body: ByteBuffer(string: body)) { response in
            (Int(response.status.code), String(buffer: response.body))
        }
    }

    @Test("DELETE …/accounts removes every user, whose refresh tokens then find none; the config's test numbers change at run time, checked as at start-up")
    func resetAndConfig() async throws {
        let toolkit = try IdentityToolkit(configuration: BackendConfiguration(), pusher: nil)
        let key = toolkit.configuration.apiKey
        try await Application(router: BackendRouter.make(toolkit: toolkit)).test(.router) { client in
            #expect(try await post(client, "\(Self.admin)/accounts", #"{"localId":"u1","phoneNumber":"+16505550101"}"#).0 == 200)
            let token = try await toolkit.call(ToolkitCalls.signInWithCustomToken, VerifyCustomTokenRequest(token: #"{"uid":"u1"}"#))
            try await client.execute(uri: "/emulator/v1/projects/authsim-demo/accounts", method: .delete) { response in
                #expect(response.status == .ok)
            }
            #expect(await toolkit.allUsers.isEmpty)
            // Google's token endpoint: "USER_NOT_FOUND: The user corresponding to the refresh token was
            // not found. It is likely the user was deleted." (the emulator says INVALID_REFRESH_TOKEN).
            await #expect(throws: IdentityToolkitError(.userNotFound)) {
                _ = try await toolkit.secureToken(SecureTokenRequest(grantType: "refresh_token", refreshToken: token.refreshToken))
            }
            try await client.execute(uri: "/emulator/v1/projects/other/accounts", method: .delete) { response in
                #expect(response.status == .badRequest)
                #expect(String(buffer: response.body).contains("CONFIGURATION_NOT_FOUND"))
            }

            // Test numbers through the config: a code request for one needs no app verification.
            let patch = #"{"signIn":{"phoneNumber":{"testPhoneNumbers":{"+16505559999":"111222"}}}}"#
            try await client.execute(uri: "/emulator/v1/projects/authsim-demo/config", method: .patch, body: ByteBuffer(string: patch)) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains(#""+16505559999":"111222""#))
            }
            let (status, _) = try await post(client, "/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode?key=\(key)",
                                             #"{"phoneNumber":"+16505559999"}"#, headers: [:])
            #expect(status == 200)
            for (bad, words) in [(#"{"signIn":{"phoneNumber":{"testPhoneNumbers":{"+1650":"1"}}}}"#, "6 digits"),
                                 (#"{"colour":"red"}"#, #"Unknown name \"colour\""#),
                                 (#"{"authsim":{"bundleID":"x"}}"#, "read-only")] {
                try await client.execute(uri: "/emulator/v1/projects/authsim-demo/config", method: .patch, body: ByteBuffer(string: bad)) { response in
                    #expect(response.status == .badRequest)
                    #expect(String(buffer: response.body).contains(words), "\(String(buffer: response.body))")
                }
            }
            #expect(await toolkit.core.testPhoneNumbers == ["+16505559999": "111222"], "a refused patch changes nothing")
        }
    }

    @Test("batchCreate: over 1,000 users, a repeated local ID, no users are refused whole; batchGet pages by uid and takes no other parameter")
    func batches() async throws {
        let toolkit = try IdentityToolkit(configuration: BackendConfiguration(), pusher: nil)
        try await Application(router: BackendRouter.make(toolkit: toolkit)).test(.router) { client in
            let many = (0...1000).map { #"{"localId":"u\#($0)"}"# }.joined(separator: ",")
            var (status, body) = try await post(client, "\(Self.admin)/accounts:batchCreate", #"{"users":[\#(many)]}"#)
            #expect(status == 400 && body.contains("at most 1000"), "\(body)")
            (status, body) = try await post(client, "\(Self.admin)/accounts:batchCreate", #"{"users":[{"localId":"a"},{"localId":"a"}]}"#)
            #expect(status == 400 && body.contains("DUPLICATE_LOCAL_ID : a"), "\(body)")
            (status, body) = try await post(client, "\(Self.admin)/accounts:batchCreate", #"{"users":[]}"#)
            #expect(status == 400 && body.contains("MISSING_USER_ACCOUNT"), "\(body)")
            (status, body) = try await post(client, "\(Self.admin)/accounts:batchCreate", #"{"users":[{"localId":"a","shoeSize":9}]}"#)
            #expect(status == 400 && body.contains(#"Unknown name \"shoeSize\" at 'users[0]'"#), "\(body)")
            #expect(await toolkit.allUsers.isEmpty, "nothing was imported from a refused batch")

            let users = (0..<5).map { #"{"localId":"user\#($0)","createdAt":1700000000000}"# }.joined(separator: ",")
            (status, body) = try await post(client, "\(Self.admin)/accounts:batchCreate", #"{"users":[\#(users)]}"#)
            #expect(status == 200, "\(body)")
            var seen: [String] = []
            var next: String?
            repeat {
                let query = "maxResults=2" + (next.map { "&nextPageToken=\($0)" } ?? "")
                let page = try await client.execute(uri: "\(Self.admin)/accounts:batchGet?\(query)", method: .get, headers: Self.owner) { response in
                    try IdentityToolkitJSON.decode(DownloadAccountResponse.self, from: response.body.readableBytesView)
                }
                seen += (page.users ?? []).map(\.localId)
                next = page.nextPageToken
            } while next != nil
            #expect(seen == ["user0", "user1", "user2", "user3", "user4"])
            try await client.execute(uri: "\(Self.admin)/accounts:batchGet?maxResult=2", method: .get, headers: Self.owner) { response in
                #expect(response.status == .badRequest)
            }
        }
    }

    @Test("admin changes are in the journal before their answer: a backend started again on the state folder has them")
    func durable() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            let toolkit = try IdentityToolkit(configuration: BackendConfiguration(), pusher: nil, stateDirectory: folder)
            _ = try await toolkit.adminCreateUser(SignUpNewUserRequest(localId: "kept", phoneNumber: "+16505550101", disabled: true))
            _ = try await toolkit.adminUpdate(SetAccountInfoRequest(localId: "kept", customAttributes: #"{"a":1}"#, validSince: "1700000000"))
        }
        let again = try IdentityToolkit(configuration: BackendConfiguration(), pusher: nil, stateDirectory: folder)
        let user = try #require(await again.call(ToolkitCalls.adminLookup, GetAccountInfoRequest(localId: ["kept"])).users?.first)
        #expect(user.phoneNumber == "+16505550101" && user.disabled == true && user.customAttributes == #"{"a":1}"# && user.validSince == "1700000000")
    }

    @Test("--sms-code: every SMS carries it; --id-seed: the same number gets the same UID in a new backend")
    func deterministic() async throws {
        var configuration = BackendConfiguration()
        configuration.fixedSMSCode = "246810"
        configuration.idSeed = "seed"
        configuration.testPhoneNumbers = ["+16505553434": "654321"]
        var uids: [String] = []
        for _ in 0..<2 {
            let toolkit = try IdentityToolkit(configuration: configuration, pusher: nil)
            let session = try await toolkit.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: "+16505553434"))
            let signedIn = try await toolkit.call(ToolkitCalls.signInWithPhoneNumber, VerifyPhoneNumberRequest(sessionInfo: session.sessionInfo, code: "654321"))
            uids.append(try #require(signedIn.localId))
            let created = try await toolkit.adminCreateUser(SignUpNewUserRequest(phoneNumber: "+16505550102"))
            let info = try #require(created.localId)
            _ = try await toolkit.change { core throws(IdentityToolkitError) in
                try core.openSession(number: "+16505550102", purpose: nil, languageCode: nil, endpoint: .sendVerificationCode)
            }
            #expect(await toolkit.messages.last?.code == "246810")
            uids.append(info)
        }
        #expect(uids[0] == uids[2] && uids[1] == uids[3] && uids[0] != uids[1], "\(uids)")
        var bad = configuration
        bad.fixedSMSCode = "12"
        #expect(throws: IdentityToolkitError.self) { _ = try bad.validated() }
    }

    @Test("--accept-unverified-code-requests takes a code request without app verification for any number, as the emulator; off, it is MISSING_APP_CREDENTIAL; a custom token's body is schema-checked")
    func unverifiedCodeRequests() async throws {
        for accept in [false, true] {
            var configuration = BackendConfiguration()
            configuration.acceptUnverifiedCodeRequests = accept
            let toolkit = try IdentityToolkit(configuration: configuration, pusher: nil)
            let key = configuration.apiKey
            try await Application(router: BackendRouter.make(toolkit: toolkit)).test(.router) { client in
                let (status, body) = try await post(client, "/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode?key=\(key)",
                                                    #"{"phoneNumber":"+16505550142"}"#, headers: [:])
                if accept {
                    #expect(status == 200, "\(body)")
                    #expect(await toolkit.messages.map(\.phoneNumber) == ["+16505550142"])
                } else {
                    #expect(status == 400 && body.contains("MISSING_APP_CREDENTIAL"), "\(body)")
                }
                let (tokenStatus, tokenBody) = try await post(client, "/identitytoolkit.googleapis.com/v1/accounts:signInWithCustomToken?key=\(key)",
                                                              #"{"token":"{\"uid\":\"u\"}","extra":1}"#, headers: [:])
                #expect(tokenStatus == 400 && tokenBody.contains(#"Unknown name \"extra\""#), "\(tokenBody)")
                // The app's calls too, v3 and v1 and v2 paths alike: a misspelled field is Google's 400,
                // and nothing happens (Google took such a body with 200 nowhere: its front end refuses it).
                let before = await toolkit.messages.count
                for (path, body) in [("/www.googleapis.com/identitytoolkit/v3/relyingparty/sendVerificationCode", #"{"phoneNumber":"+16505550143","phonenumber":"x"}"#),
                                     ("/identitytoolkit.googleapis.com/v1/accounts:signInWithPhoneNumber", #"{"sessionInfo":"s","code":"1","colour":"red"}"#),
                                     ("/identitytoolkit.googleapis.com/v1/accounts:update", #"{"idToken":"t","displayname":"Ada"}"#),
                                     ("/identitytoolkit.googleapis.com/v2/accounts/mfaSignIn:start", #"{"mfaPendingCredential":"p","extra":true}"#)] {
                    let (status, answer) = try await post(client, "\(path)?key=\(key)", body, headers: [:])
                    #expect(status == 400 && answer.contains("Unknown name") && answer.contains("Cannot find field"), "\(path): \(answer)")
                }
                #expect(await toolkit.messages.count == before)
            }
        }
    }
}
