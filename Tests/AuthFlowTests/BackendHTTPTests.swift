import IdentityToolkitAPI
import Utilities
import AuthBackend
import FirebaseAuthCore
import Foundation
import Scenarios
import TestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("The local backend over HTTP")
struct BackendHTTPTests {
    @Test("the API key is required and checked; unknown paths are 404; errors use Google's envelope")
    func apiKey() async throws {
        try await withWorld { world, _ in
            let v1 = "\(world.backendURL)/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode"
            let (missing, missingBody) = try await post(v1, #"{"phoneNumber":"+16505551234"}"#)
            #expect(missing == 403)
            #expect(errorMessage(missingBody) == "The request is missing a valid API key.")
            let (wrong, _) = try await post(v1 + "?key=nope", "{}")
            #expect(wrong == 400)
            let (header, headerBody) = try await post(v1, #"{"phoneNumber":"+16505551234"}"#,
                                                      headers: ["x-goog-api-key": world.toolkit!.configuration.apiKey])
            #expect(header == 400)
            #expect(errorMessage(headerBody)?.hasPrefix("MISSING_APP_CREDENTIAL") == true)
            let errors = try #require((headerBody["error"] as? [String: Any])?["errors"] as? [[String: Any]])
            #expect(errors.first?["domain"] as? String == "global")
            let (notFound, _) = try await post("\(world.backendURL)/identitytoolkit.googleapis.com/v1/accounts:nothing?key=x", "{}")
            #expect(notFound == 404)
        }
    }

    @Test("phone numbers are checked as E.164 with length limits", arguments: [
        ("", "MISSING_PHONE_NUMBER"), ("6505551234", "INVALID_PHONE_NUMBER : Invalid format."),
        ("+1650", "INVALID_PHONE_NUMBER : TOO_SHORT"), ("+1234567890123456", "INVALID_PHONE_NUMBER : TOO_LONG"),
        ("+1650555abcd", "INVALID_PHONE_NUMBER : Invalid format."),
    ])
    func phoneNumbers(number: String, message: String) async throws {
        try await withWorld(name: "phone\(number)") { world, _ in
            let url = "\(world.backendURL)/www.googleapis.com/identitytoolkit/v3/relyingparty/sendVerificationCode?key=\(world.toolkit!.configuration.apiKey)"
            let (status, body) = try await post(url, #"{"phoneNumber":"\#(number)"}"#)
            #expect(status == 400)
            #expect(errorMessage(body) == message)
        }
    }

    @Test("verifyClient needs an APNs token; the emulator endpoint lists sent codes; the JWKS is published")
    func endpoints() async throws {
        try await withWorld { world, _ in
            let key = world.toolkit!.configuration.apiKey
            let base = "\(world.backendURL)/www.googleapis.com/identitytoolkit/v3/relyingparty"
            let (status, body) = try await post("\(base)/verifyClient?key=\(key)", "{}")
            #expect(status == 400)
            #expect(errorMessage(body) == "MISSING_IOS_APP_TOKEN")
            let (auth, _) = try await world.install(AppProfile())
            _ = try await Flow.verify(auth, phone)
            let (codesData, _) = try await URLSession.shared.data(from: URL(string: "\(world.backendURL)/emulator/v1/projects/authsim-demo/verificationCodes")!)
            let codes = try #require((try JSONSerialization.jsonObject(with: codesData) as? [String: Any])?["verificationCodes"] as? [[String: Any]])
            #expect(codes.count == 1)
            #expect(codes.first?["phoneNumber"] as? String == phone)
            #expect((codes.first?["code"] as? String)?.count == 6)
            let (jwksData, _) = try await URLSession.shared.data(from: URL(string: "\(world.backendURL)/www.googleapis.com/robot/v1/metadata/jwk/securetoken@system.gserviceaccount.com")!)
            let keys = try #require((try JSONSerialization.jsonObject(with: jwksData) as? [String: Any])?["keys"] as? [[String: Any]])
            #expect(keys.first?["alg"] as? String == "RS256")
            #expect(keys.first?["kty"] as? String == "RSA")
        }
    }

    @Test("users are kept on disk")
    func usersPersist() async throws {
        try await withWorld { world, folder in
            let (auth, _) = try await world.install(AppProfile())
            let id = try await Flow.verify(auth, phone)
            let code = try #require(await world.lastCode(for: phone))
            let uid = try await Flow.signIn(auth, id, code)
            let restarted = try IdentityToolkit(pusher: nil, stateDirectory: folder.appendingPathComponent("State/backend"))
            #expect(await restarted.allUsers.map(\.localId) == [uid])
        }
    }
}

/// The guide's two calls, as plain throwing functions.
enum Flow {
    static func verify(_ auth: Auth, _ number: String) async throws -> String {
        try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber(number, uiDelegate: nil)
    }
    static func signIn(_ auth: Auth, _ id: String, _ code: String) async throws -> String {
        try await auth.signIn(with: PhoneAuthProvider.provider(auth: auth).credential(withVerificationID: id, verificationCode: code)).user.uid
    }
}

@Suite("reCAPTCHA tokens at the backend")
struct RecaptchaTokenTests {
    @Test("a token from a solved challenge buys one code; reused, unknown or stale it is CAPTCHA_CHECK_FAILED")
    func singleUse() async throws {
        let clock = ManualWallClock()
        let toolkit = try IdentityToolkit(pusher: nil, clock: clock)
        let token = try await toolkit.issueRecaptchaToken(eventID: "ABCDEFGHIJ")
        #expect(try await toolkit.recaptchaEventID(for: token) == "ABCDEFGHIJ")
        _ = try await toolkit.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: "+16505551234", recaptchaToken: token))
        await #expect(throws: IdentityToolkitError(.captchaCheckFailed)) {
            try await toolkit.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: "+16505550000", recaptchaToken: token))
        }
        do {
            _ = try await toolkit.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: "+16505550000", recaptchaToken: "03Anope"))
            Issue.record("an unknown token was accepted")
        } catch {
            #expect(error.message == "CAPTCHA_CHECK_FAILED : Recaptcha verification failed - MALFORMED")
        }
        let stale = try await toolkit.issueRecaptchaToken(eventID: "KLMNOPQRST")
        clock.advance(by: 121)
        do {
            _ = try await toolkit.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: "+16505550000", recaptchaToken: stale))
            Issue.record("a stale token was accepted")
        } catch {
            #expect(error.message == "CAPTCHA_CHECK_FAILED : Recaptcha verification failed - EXPIRED")
        }
    }
}
