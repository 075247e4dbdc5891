import Foundation
import IdentityToolkitAPI
import Testing

/// The typed contract: paths and URLs as the SDK builds them, bodies with the SDK's keys, the
/// error envelope both ways.
@Suite("Identity Toolkit API types")
struct IdentityToolkitAPITests {
    /// FirebaseAuth 12.19 `Backend/IdentityToolkitRequest.swift` `requestURL()`: v3 names under
    /// www.googleapis.com/identitytoolkit/v3/relyingparty, Identity Platform (v2) under
    /// identitytoolkit.googleapis.com/v2, the emulator's host:port in front of the production host;
    /// `SecureTokenRequest.swift`: securetoken.googleapis.com/v1/token.
    @Test("endpoints build the SDK's URLs, in production and against an emulator", arguments: [
        (IdentityToolkitEndpoint.verifyClient, "https://www.googleapis.com/identitytoolkit/v3/relyingparty/verifyClient?key=K",
         "http://127.0.0.1:9099/www.googleapis.com/identitytoolkit/v3/relyingparty/verifyClient?key=K"),
        (.revokeToken, "https://identitytoolkit.googleapis.com/v2/accounts:revokeToken?key=K",
         "http://127.0.0.1:9099/identitytoolkit.googleapis.com/v2/accounts:revokeToken?key=K"),
        (.startMFASignIn, "https://identitytoolkit.googleapis.com/v2/accounts/mfaSignIn:start?key=K",
         "http://127.0.0.1:9099/identitytoolkit.googleapis.com/v2/accounts/mfaSignIn:start?key=K"),
        (.secureToken, "https://securetoken.googleapis.com/v1/token?key=K",
         "http://127.0.0.1:9099/securetoken.googleapis.com/v1/token?key=K"),
        (.adminLookup, "https://identitytoolkit.googleapis.com/v1/projects/demo/accounts:lookup",
         "http://127.0.0.1:9099/identitytoolkit.googleapis.com/v1/projects/demo/accounts:lookup"),
    ])
    func urls(endpoint: IdentityToolkitEndpoint, production: String, emulator: String) throws {
        #expect(endpoint.url(emulator: nil, apiKey: "K", projectID: "demo")?.absoluteString == production)
        #expect(endpoint.url(emulator: "127.0.0.1:9099", apiKey: "K", projectID: "demo")?.absoluteString == emulator)
    }

    /// `GetRecaptchaConfigRequest.queryParams()`: `&clientType=CLIENT_TYPE_IOS&version=RECAPTCHA_ENTERPRISE`.
    @Test("the reCAPTCHA config request is a GET whose query follows the key in the SDK's order, and reads back")
    func recaptchaConfigQuery() throws {
        let request = GetRecaptchaConfigRequest()
        #expect(GetRecaptchaConfigRequest.endpoint.method == .get)
        let url = try #require(GetRecaptchaConfigRequest.endpoint.url(emulator: nil, apiKey: "K", query: request.queryItems))
        #expect(url.absoluteString == "https://identitytoolkit.googleapis.com/v2/recaptchaConfig?key=K&clientType=CLIENT_TYPE_IOS&version=RECAPTCHA_ENTERPRISE")
        #expect(GetRecaptchaConfigRequest(queryItems: request.queryItems + [URLQueryItem(name: "tenantId", value: "t1")])
                == GetRecaptchaConfigRequest(tenantId: "t1"))
    }

    /// `VerifyClientRequest.swift`: `isSandbox` is in the body only for a sandbox token.
    /// Audit 3, D2.6: GetProjectConfigResponse.swift 24–34 reads authorizedDomains as a list or as a
    /// string holding a JSON list.
    @Test("getProjectConfig's authorizedDomains read as a list or as a JSON list in a string, as the SDK reads them")
    func authorizedDomains() throws {
        func read(_ json: String) throws -> [String]? {
            try IdentityToolkitJSON.decode(GetProjectConfigResponse.self, from: Array(json.utf8)).authorizedDomains
        }
        #expect(try read(#"{"projectId":"p","authorizedDomains":["localhost","p.firebaseapp.com"]}"#) == ["localhost", "p.firebaseapp.com"])
        #expect(try read(#"{"projectId":"p","authorizedDomains":"[\"localhost\",\"p.web.app\"]"}"#) == ["localhost", "p.web.app"])
        #expect(try read(#"{"projectId":"p","authorizedDomains":"not a list"}"#) == nil)
        #expect(try read(#"{"projectId":"p"}"#) == nil)
    }

    @Test("bodies carry the SDK's keys and leave out what the SDK leaves out")
    func bodies() throws {
        #expect(try text(VerifyClientRequest(appToken: "AB12", isSandbox: true)) == #"{"appToken":"AB12","isSandbox":true}"#)
        #expect(try text(VerifyClientRequest(appToken: "AB12", isSandbox: false)) == #"{"appToken":"AB12"}"#)
        #expect(try text(SendVerificationCodeRequest(phoneNumber: "+16505551234", iosReceipt: "R", iosSecret: "S"))
                == #"{"iosReceipt":"R","iosSecret":"S","phoneNumber":"+16505551234"}"#)
        #expect(try text(RevokeTokenRequest(providerId: .apple, tokenType: .sdkAuthorizationCode, token: "c", idToken: "t"))
                == #"{"idToken":"t","providerId":"apple.com","token":"c","tokenType":"3"}"#)
        let mfa = StartMFASignInRequest(mfaPendingCredential: "P", mfaEnrollmentId: "E",
                                        phoneSignInInfo: StartMFAPhoneRequestInfo(phoneNumber: nil, recaptchaToken: "T"))
        #expect(try text(mfa) == #"{"mfaEnrollmentId":"E","mfaPendingCredential":"P","phoneSignInInfo":{"recaptchaToken":"T"}}"#)
    }

    @Test("the Secure Token request reads the SDK's camelCase and REST clients' snake_case, and writes the SDK's")
    func secureTokenSpellings() throws {
        let snake = try IdentityToolkitJSON.decode(SecureTokenRequest.self, from: Array(#"{"grant_type":"refresh_token","refresh_token":"r"}"#.utf8))
        let camel = try IdentityToolkitJSON.decode(SecureTokenRequest.self, from: Array(#"{"grantType":"refresh_token","refreshToken":"r"}"#.utf8))
        #expect(snake == camel)
        #expect(try text(snake) == #"{"grantType":"refresh_token","refreshToken":"r"}"#)
        let answer = SecureTokenResponse(accessToken: "a", expiresIn: "3600", refreshToken: "r", idToken: "a", userId: "u", projectId: "p")
        #expect(try text(answer).contains(#""refresh_token":"r""#))
    }

    @Test("a field of the wrong type is an error naming the field; unknown fields are ignored")
    func decodingErrors() throws {
        let error = #expect(throws: IdentityToolkitError.self) {
            try IdentityToolkitJSON.decode(VerifyClientRequest.self, from: Array(#"{"appToken":"AB","isSandbox":"yes"}"#.utf8))
        }
        #expect(error?.code == .invalidJSON)
        #expect(error?.message.contains("isSandbox") == true)
        #expect(throws: IdentityToolkitError.self) { try IdentityToolkitJSON.decode(VerifyClientRequest.self, from: Array("{".utf8)) }
        let request = try IdentityToolkitJSON.decode(VerifyClientRequest.self, from: Array(#"{"appToken":"AB","extra":[1,2]}"#.utf8))
        #expect(request.appToken == "AB")
    }

    /// `AuthBackend.swift` `splitStringAtFirstColon`: the code before the first colon, trimmed.
    @Test("the error envelope: CODE : detail written, and read back split at the first colon")
    func envelope() throws {
        let error = IdentityToolkitError(.captchaCheckFailed, "Recaptcha verification failed - EXPIRED")
        #expect(error.httpStatus == 400)
        let decoded = try IdentityToolkitJSON.decode(ErrorResponse.self, from: error.body)
        #expect(decoded.error.message == "CAPTCHA_CHECK_FAILED : Recaptcha verification failed - EXPIRED")
        #expect(decoded.error.errors?.first?.reason == "invalid")
        let back = IdentityToolkitError(message: decoded.error.message, status: decoded.error.code)
        #expect(back.code == .captchaCheckFailed)
        #expect(back.detail == "Recaptcha verification failed - EXPIRED")
        #expect(IdentityToolkitError(message: "INVALID_CODE", status: 400).detail == nil)
        #expect(IdentityToolkitError(message: "SOMETHING_NEW : a: b", status: 400).code.rawValue == "SOMETHING_NEW")
        #expect(IdentityToolkitError(.permissionDenied).httpStatus == 403)
        #expect(IdentityToolkitError(.permissionDenied).response.error.errors?.first?.reason == "forbidden")
    }

    private func text(_ value: some Encodable) throws -> String {
        String(decoding: try IdentityToolkitJSON.encode(value), as: UTF8.self)
    }
}
