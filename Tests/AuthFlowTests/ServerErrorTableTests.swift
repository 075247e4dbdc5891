import AuthBackend
import DeviceOS
import FirebaseAuthCore
import FirebaseCore
import Foundation
import IdentityToolkitAPI
import Testing

/// One answer of the service and what the SDK makes of it.
struct ServerAnswerCase: Sendable, CustomTestStringConvertible {
    let fault: BackendFault
    let code: AuthErrorCode
    /// `localizedDescription`, when it is not the code's own message.
    let description: String?
    var testDescription: String { "\(fault.serverMessage ?? "HTTP \(fault.status) \(fault.body.prefix(30))") → \(code.rawValue)" }
}

/// Every server message FirebaseAuth 12.19 maps (`Backend/AuthBackend.swift`
/// `clientError(withServerErrorMessage:…)`, lines 326–471) and the answers it does not, each one
/// sent by the real backend over HTTP (a queued ``BackendFault`` on `verifyPhoneNumber`) to a
/// phone sign-in of the auth core, whose `error as NSError` must be what the SDK's is.
@Suite("Every server message the SDK maps, through the real backend")
struct ServerErrorTableTests {
    /// `CODE : detail` for `code`, whose description is the detail (the SDK's `error(code:message:)`).
    static func detailed(_ server: String, _ code: AuthErrorCode) -> ServerAnswerCase {
        ServerAnswerCase(fault: .error("\(server) : what the service said about \(server)", on: "verifyPhoneNumber"), code: code,
                         description: "what the service said about \(server)")
    }

    /// A code whose SDK constructor takes no message: the description is the code's own.
    static func bare(_ server: String, _ code: AuthErrorCode) -> ServerAnswerCase {
        ServerAnswerCase(fault: .error("\(server) : a detail the SDK drops", on: "verifyPhoneNumber"), code: code, description: nil)
    }

    static let mapped: [ServerAnswerCase] = [
        detailed("USER_NOT_FOUND", .userNotFound), detailed("MISSING_CONTINUE_URI", .missingContinueURI),
        detailed("INVALID_IDENTIFIER", .invalidEmail), detailed("INVALID_ID_TOKEN", .invalidUserToken),
        detailed("CREDENTIAL_TOO_OLD_LOGIN_AGAIN", .requiresRecentLogin), bare("EMAIL_EXISTS", .emailAlreadyInUse),
        detailed("OPERATION_NOT_ALLOWED", .operationNotAllowed), detailed("PASSWORD_LOGIN_DISABLED", .operationNotAllowed),
        detailed("USER_DISABLED", .userDisabled), detailed("INVALID_EMAIL", .invalidEmail),
        detailed("EXPIRED_OOB_CODE", .expiredActionCode), detailed("INVALID_OOB_CODE", .invalidActionCode),
        detailed("INVALID_MESSAGE_PAYLOAD", .invalidMessagePayload), detailed("INVALID_SENDER", .invalidSender),
        detailed("INVALID_RECIPIENT_EMAIL", .invalidRecipientEmail), bare("WEAK_PASSWORD", .weakPassword),
        detailed("TOO_MANY_ATTEMPTS_TRY_LATER", .tooManyRequests), detailed("EMAIL_NOT_FOUND", .userNotFound),
        detailed("MISSING_EMAIL", .missingEmail), detailed("MISSING_IOS_BUNDLE_ID", .missingIosBundleID),
        detailed("MISSING_ANDROID_PACKAGE_NAME", .missingAndroidPackageName), detailed("UNAUTHORIZED_DOMAIN", .unauthorizedDomain),
        detailed("INVALID_CONTINUE_URI", .invalidContinueURI), detailed("INVALID_PASSWORD", .wrongPassword),
        detailed("INVALID_IDP_RESPONSE", .invalidCredential), detailed("INVALID_PENDING_TOKEN", .invalidCredential),
        detailed("INVALID_LOGIN_CREDENTIALS", .invalidCredential), detailed("INVALID_CUSTOM_TOKEN", .invalidCustomToken),
        detailed("CREDENTIAL_MISMATCH", .customTokenMismatch), detailed("INVALID_PHONE_NUMBER", .invalidPhoneNumber),
        detailed("QUOTA_EXCEEDED", .quotaExceeded), detailed("APP_NOT_VERIFIED", .appNotVerified),
        detailed("CAPTCHA_CHECK_FAILED", .captchaCheckFailed), detailed("INVALID_APP_CREDENTIAL", .invalidAppCredential),
        detailed("MISSING_APP_CREDENTIAL", .missingAppCredential), detailed("INVALID_CODE", .invalidVerificationCode),
        detailed("INVALID_HOSTING_LINK_DOMAIN", .invalidHostingLinkDomain), detailed("INVALID_SESSION_INFO", .invalidVerificationID),
        detailed("SESSION_EXPIRED", .sessionExpired), detailed("ADMIN_ONLY_OPERATION", .adminRestrictedOperation),
        detailed("EMAIL_CHANGE_NEEDS_VERIFICATION", .emailChangeNeedsVerification),
        detailed("INVALID_MFA_PENDING_CREDENTIAL", .invalidMultiFactorSession), detailed("INVALID_PROVIDER_ID", .invalidProviderID),
        detailed("MFA_ENROLLMENT_NOT_FOUND", .multiFactorInfoNotFound), detailed("MISSING_CLIENT_IDENTIFIER", .missingClientIdentifier),
        bare("MISSING_IOS_APP_TOKEN", .missingAppToken), detailed("MISSING_MFA_ENROLLMENT_ID", .missingMultiFactorInfo),
        detailed("MISSING_MFA_PENDING_CREDENTIAL", .missingMultiFactorSession), detailed("MISSING_OR_INVALID_NONCE", .missingOrInvalidNonce),
        detailed("PASSWORD_DOES_NOT_MEET_REQUIREMENTS", .passwordDoesNotMeetRequirements),
        detailed("SECOND_FACTOR_EXISTS", .secondFactorAlreadyEnrolled), detailed("SECOND_FACTOR_LIMIT_EXCEEDED", .maximumSecondFactorCountExceeded),
        bare("TENANT_ID_MISMATCH", .tenantIDMismatch), detailed("TOKEN_EXPIRED", .userTokenExpired),
        detailed("UNSUPPORTED_FIRST_FACTOR", .unsupportedFirstFactor), bare("UNSUPPORTED_TENANT_OPERATION", .unsupportedTenantOperation),
        detailed("UNVERIFIED_EMAIL", .unverifiedEmail), detailed("FEDERATED_USER_ID_ALREADY_LINKED", .credentialAlreadyInUse),
        // The blocking function's detail holds JSON; its error.message is the description.
        ServerAnswerCase(fault: .error(#"BLOCKING_FUNCTION_ERROR_RESPONSE : HTTP Cloud Function returned an error: {"error":{"details":{},"message":"no sign-ups on Sunday","status":"INVALID_ARGUMENT"}}"#,
                                       on: "verifyPhoneNumber"), code: .blockingCloudFunctionError, description: "no sign-ups on Sunday"),
        // No colon, or nothing after it: the code's own message (VerifyPasswordTests' "TOO_MANY_ATTEMPTS_TRY_LATER:").
        ServerAnswerCase(fault: .error("TOO_MANY_ATTEMPTS_TRY_LATER:", on: "verifyPhoneNumber"), code: .tooManyRequests, description: nil),
        ServerAnswerCase(fault: .error("USER_DISABLED", on: "verifyPhoneNumber"), code: .userDisabled, description: nil),
        // Spaces around the code are trimmed (splitStringAtFirstColon).
        ServerAnswerCase(fault: .error("  SESSION_EXPIRED  :  gone  ", on: "verifyPhoneNumber"), code: .sessionExpired, description: "gone"),
        // An unknown message with the key's reasons (AuthBackend.swift 457–468; VerifyPasswordTests).
        ServerAnswerCase(fault: .error("Bad Request", reason: "keyInvalid", on: "verifyPhoneNumber"), code: .invalidAPIKey, description: nil),
        ServerAnswerCase(fault: .error("Bad Request", status: 403, reason: "ipRefererBlocked", on: "verifyPhoneNumber"),
                         code: .appNotAuthorized, description: nil),
    ]

    @Test("each mapped message: the SDK's code, name and description; the detail where the SDK keeps it", arguments: mapped)
    func mappedMessage(_ answer: ServerAnswerCase) async throws {
        let error = try await signInError(answer.fault)
        #expect(error.code == answer.code)
        let bridged = error as NSError
        #expect(bridged.domain == "FIRAuthErrorDomain")
        #expect(bridged.code == answer.code.rawValue)
        #expect(bridged.userInfo[AuthErrorUserInfoNameKey] as? String == answer.code.errorCodeString)
        #expect(bridged.localizedDescription == (answer.description ?? answer.code.errorDescription))
        #expect(bridged.userInfo[NSUnderlyingErrorKey] == nil)
    }

    /// What the SDK cannot map: `internalError` (17999) with `FIRAuthInternalErrorDomain` 3 over
    /// `com.google.HTTPStatus` `status` (firebase-ios-sdk#14242, #1941 show it on devices).
    static let unmapped: [(fault: BackendFault, deserialized: Bool)] = [
        (.error("SOMETHING_NEW : the service added a code", on: "verifyPhoneNumber"), true),
        (.error("API key not valid. Please pass a valid API key.", reason: "badRequest", googleStatus: "INVALID_ARGUMENT", on: "verifyPhoneNumber"), true),
        (.raw(status: 400, body: #"{"error":{"code":400}}"#, on: "verifyPhoneNumber"), true),
        (.raw(status: 500, body: #"{"nothing":"here"}"#, on: "verifyPhoneNumber"), true),
        (.raw(status: 502, body: "<html><body>Bad Gateway</body></html>", on: "verifyPhoneNumber"), false),
        (.raw(status: 400, body: "[1,2]", on: "verifyPhoneNumber"), true),
    ]

    @Test("what it does not map is internalError with the answer underneath, as on the device", arguments: unmapped)
    func unmappedAnswer(_ fault: BackendFault, deserialized: Bool) async throws {
        let error = try await signInError(fault)
        #expect(error.code == .internalError)
        let bridged = error as NSError
        #expect(bridged.localizedDescription == "An internal error has occurred, print and inspect the error details for more information.")
        let inner = try #require(bridged.userInfo[NSUnderlyingErrorKey] as? NSError)
        #expect(inner.domain == "FIRAuthInternalErrorDomain")
        #expect(inner.code == 3)
        if deserialized {
            #expect(inner.userInfo["FIRAuthErrorUserInfoDeserializedResponseKey"] != nil)
            if let message = fault.serverMessage {
                let object = try #require(inner.userInfo["FIRAuthErrorUserInfoDeserializedResponseKey"] as? [String: Any])
                #expect(object["message"] as? String == message)
            }
        } else {
            #expect(inner.userInfo["FIRAuthErrorUserInfoDataKey"] as? Data == Data(fault.body.utf8))
        }
        let http = try #require(inner.userInfo[NSUnderlyingErrorKey] as? NSError)
        #expect(http.domain == "com.google.HTTPStatus")
        #expect(http.code == fault.status)
    }

    @Test("a 200 the SDK cannot read: internalError over FIRAuthInternalErrorDomain 4 (not JSON) or 5 (fields of the wrong kind)")
    func undecodableSuccess() async throws {
        let notJSON = try await signInError(.raw(status: 200, body: "OK", on: "verifyPhoneNumber"))
        #expect(notJSON.code == .internalError)
        #expect((notJSON.underlyingError)?.code == 4)
        let wrongKind = try await signInError(.raw(status: 200, body: #"{"idToken":7}"#, on: "verifyPhoneNumber"))
        #expect(wrongKind.code == .internalError)
        #expect(wrongKind.underlyingError?.code == 5)
        #expect(wrongKind.underlyingError?.domain == "FIRAuthInternalErrorDomain")
    }

    /// A backend of its own with `fault` queued, and a phone sign-in (one `verifyPhoneNumber`
    /// request, no retries) against it.
    func signInError(_ fault: BackendFault) async throws -> AuthError {
        let toolkit = try IdentityToolkit(configuration: BackendConfiguration(), pusher: nil)
        let server = try await BackendServer.start(toolkit: toolkit)
        defer { Task { await server.shutdown() } }
        toolkit.faults.add(fault)
        let options = FirebaseOptions(googleAppID: "1:123456789012:ios:a1b2c3d4e5f60718", gcmSenderID: "123456789012")
        options.apiKey = toolkit.configuration.apiKey
        let auth = Auth.auth(app: FirebaseApp(name: UUID().uuidString, options: options,
                                              host: AppHost(AppHost.Configuration(bundleID: "com.example.authsim", urlSchemes: [options.encodedAppIDScheme]))))
        auth.useEmulator(withHost: server.host, port: server.port)
        let provider = PhoneAuthProvider.provider(auth: auth)
        do throws(AuthError) {
            _ = try await AuthError.catching { try await auth.signIn(with: provider.credential(withVerificationID: "session", verificationCode: "123456")) }
        } catch {
            #expect(toolkit.faults.pending.isEmpty, "the fault was not used: the request went elsewhere")
            return error
        }
        throw ServerErrorTableFailure("signed in despite the fault \(fault)")
    }
}

struct ServerErrorTableFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
