import Foundation
import IdentityToolkitAPI

/// The SDK's internal error domain (`AuthInternalErrors.swift`): what sits under an
/// `internalError` (17999) the SDK could not map, with the answer that caused it.
package enum AuthInternalErrors {
    package static let domain = "FIRAuthInternalErrorDomain"
    /// The deserialized answer (the envelope's `error` object, or the whole answer).
    package static let userInfoDeserializedResponseKey = "FIRAuthErrorUserInfoDeserializedResponseKey"
    /// The raw answer, when it was not JSON.
    package static let userInfoDataKey = "FIRAuthErrorUserInfoDataKey"
    /// GTMSessionFetcher's domain for an answer whose status says error: `code` is the status,
    /// `userInfo["data"]` the body. It is the innermost error of every error answer.
    package static let httpStatusDomain = "com.google.HTTPStatus"

    /// `AuthInternalErrorCode`.
    package enum Code: Int, Sendable {
        /// An error answer the SDK does not map (an unknown message, no message, not JSON).
        case unexpectedErrorResponse = 3
        /// A success answer that is not JSON, or not a JSON object.
        case unexpectedResponse = 4
        /// A success answer whose fields do not decode.
        case rpcResponseDecodingError = 5
    }
}

extension AuthError {
    /// The server codes (`CODE : detail`) the SDK maps to its own (FirebaseAuth 12.19
    /// `Backend/AuthBackend.swift` `clientError(withServerErrorMessage:…)`, lines 326–471), and
    /// nothing else: any other message is `internalError`, as on the device. Keyed by the
    /// message's text, as the SDK's table is.
    static let serverCodes: [String: AuthErrorCode] = [
        "USER_NOT_FOUND": .userNotFound, "MISSING_CONTINUE_URI": .missingContinueURI, "INVALID_IDENTIFIER": .invalidEmail,
        "INVALID_ID_TOKEN": .invalidUserToken, "CREDENTIAL_TOO_OLD_LOGIN_AGAIN": .requiresRecentLogin,
        "EMAIL_EXISTS": .emailAlreadyInUse, "OPERATION_NOT_ALLOWED": .operationNotAllowed,
        "PASSWORD_LOGIN_DISABLED": .operationNotAllowed, "USER_DISABLED": .userDisabled, "INVALID_EMAIL": .invalidEmail,
        "EXPIRED_OOB_CODE": .expiredActionCode, "INVALID_OOB_CODE": .invalidActionCode,
        "INVALID_MESSAGE_PAYLOAD": .invalidMessagePayload, "INVALID_SENDER": .invalidSender,
        "INVALID_RECIPIENT_EMAIL": .invalidRecipientEmail, "WEAK_PASSWORD": .weakPassword,
        "TOO_MANY_ATTEMPTS_TRY_LATER": .tooManyRequests, "EMAIL_NOT_FOUND": .userNotFound, "MISSING_EMAIL": .missingEmail,
        "MISSING_IOS_BUNDLE_ID": .missingIosBundleID, "MISSING_ANDROID_PACKAGE_NAME": .missingAndroidPackageName,
        "UNAUTHORIZED_DOMAIN": .unauthorizedDomain, "INVALID_CONTINUE_URI": .invalidContinueURI,
        "INVALID_PASSWORD": .wrongPassword, "INVALID_IDP_RESPONSE": .invalidCredential, "INVALID_PENDING_TOKEN": .invalidCredential,
        "INVALID_LOGIN_CREDENTIALS": .invalidCredential, "INVALID_CUSTOM_TOKEN": .invalidCustomToken,
        "CREDENTIAL_MISMATCH": .customTokenMismatch, "INVALID_PHONE_NUMBER": .invalidPhoneNumber,
        "QUOTA_EXCEEDED": .quotaExceeded, "APP_NOT_VERIFIED": .appNotVerified, "CAPTCHA_CHECK_FAILED": .captchaCheckFailed,
        "INVALID_APP_CREDENTIAL": .invalidAppCredential, "MISSING_APP_CREDENTIAL": .missingAppCredential,
        "INVALID_CODE": .invalidVerificationCode, "INVALID_HOSTING_LINK_DOMAIN": .invalidHostingLinkDomain,
        "INVALID_SESSION_INFO": .invalidVerificationID, "SESSION_EXPIRED": .sessionExpired,
        "ADMIN_ONLY_OPERATION": .adminRestrictedOperation, "BLOCKING_FUNCTION_ERROR_RESPONSE": .blockingCloudFunctionError,
        "EMAIL_CHANGE_NEEDS_VERIFICATION": .emailChangeNeedsVerification,
        "INVALID_MFA_PENDING_CREDENTIAL": .invalidMultiFactorSession, "INVALID_PROVIDER_ID": .invalidProviderID,
        "MFA_ENROLLMENT_NOT_FOUND": .multiFactorInfoNotFound, "MISSING_CLIENT_IDENTIFIER": .missingClientIdentifier,
        "MISSING_IOS_APP_TOKEN": .missingAppToken, "MISSING_MFA_ENROLLMENT_ID": .missingMultiFactorInfo,
        "MISSING_MFA_PENDING_CREDENTIAL": .missingMultiFactorSession, "MISSING_OR_INVALID_NONCE": .missingOrInvalidNonce,
        "PASSWORD_DOES_NOT_MEET_REQUIREMENTS": .passwordDoesNotMeetRequirements,
        "SECOND_FACTOR_EXISTS": .secondFactorAlreadyEnrolled, "SECOND_FACTOR_LIMIT_EXCEEDED": .maximumSecondFactorCountExceeded,
        "TENANT_ID_MISMATCH": .tenantIDMismatch, "TOKEN_EXPIRED": .userTokenExpired,
        "UNSUPPORTED_FIRST_FACTOR": .unsupportedFirstFactor, "UNSUPPORTED_TENANT_OPERATION": .unsupportedTenantOperation,
        "UNVERIFIED_EMAIL": .unverifiedEmail, "FEDERATED_USER_ID_ALREADY_LINKED": .credentialAlreadyInUse,
    ]

    /// A server message the SDK maps (`CODE` or `CODE : detail`, split at the first colon and
    /// trimmed), or `nil` for one it does not know.
    static func fromServer(_ message: String) -> AuthError? {
        let server = IdentityToolkitError(message: message, status: 400)
        guard let code = serverCodes[server.code.rawValue] else { return nil }
        // WEAK_PASSWORD's detail is the SDK's failure reason, not its description.
        let account = code == .weakPassword ? (server.detail ?? message) : message
        return AuthError(code, account, serverMessage: message)
    }

    /// How the SDK reads an answer whose status says error (AuthBackend.swift 214–318): the
    /// envelope's message mapped by ``serverCodes``; for a message it does not know, the key's
    /// `errors[].reason` (`keyInvalid…` → 17023, `ipRefererBlocked` → 17028); anything else
    /// `internalError` with the SDK's underlying errors: `FIRAuthInternalErrorDomain` 3 holding the
    /// deserialized `error` object (or the raw body), over `com.google.HTTPStatus` `status`.
    static func fromErrorAnswer(status: Int, body: [UInt8], endpoint: String) -> AuthError {
        let http = NSError(domain: AuthInternalErrors.httpStatusDomain, code: status, userInfo: ["data": Data(body)])
        func unexpected(_ userInfo: [String: Any], _ why: String, serverMessage: String? = nil) -> AuthError {
            var info = userInfo
            info[NSUnderlyingErrorKey] = http
            return AuthError(.internalError, "\(endpoint) answered HTTP \(status): \(why)", serverMessage: serverMessage,
                             underlyingError: NSError(domain: AuthInternalErrors.domain, code: AuthInternalErrors.Code.unexpectedErrorResponse.rawValue,
                                                      userInfo: info))
        }
        guard let decoded = try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]) else {
            return unexpected([AuthInternalErrors.userInfoDataKey: Data(body)], "a body that is not JSON (\(body.count) bytes)")
        }
        guard let answer = decoded as? [String: Any] else {
            return unexpected([AuthInternalErrors.userInfoDeserializedResponseKey: decoded], "JSON that is not an object")
        }
        guard let error = answer["error"] as? [String: Any] else {
            return unexpected([AuthInternalErrors.userInfoDeserializedResponseKey: answer], "no error object")
        }
        guard let message = error["message"] as? String else {
            return unexpected([AuthInternalErrors.userInfoDeserializedResponseKey: error], "an error object without a message")
        }
        if let known = fromServer(message) { return known }
        for item in error["errors"] as? [[String: String]] ?? [] {
            guard let reason = item["reason"] else { continue }
            if reason.hasPrefix("keyInvalid") {
                return AuthError(.invalidAPIKey, "\(endpoint): \(message) (reason \(reason))", serverMessage: message)
            }
            if reason == "ipRefererBlocked" {
                return AuthError(.appNotAuthorized, "\(endpoint): \(message) (reason \(reason))", serverMessage: message)
            }
        }
        return unexpected([AuthInternalErrors.userInfoDeserializedResponseKey: error],
                          "\(message), which FirebaseAuth 12.19 does not map (the answer is in the underlying error's \(AuthInternalErrors.userInfoDeserializedResponseKey))",
                          serverMessage: message)
    }

    /// A success answer the SDK cannot read: not JSON or not an object (`unexpectedResponse`, 4),
    /// or fields of the wrong kind (`RPCResponseDecodingError`, 5); `internalError` either way.
    static func fromUndecodableAnswer(body: [UInt8], endpoint: String, why: String) -> AuthError {
        let decoded = try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])
        let (code, info): (AuthInternalErrors.Code, [String: Any]) = switch decoded {
        case let object as [String: Any]: (.rpcResponseDecodingError, [AuthInternalErrors.userInfoDeserializedResponseKey: object])
        case .some(let other): (.unexpectedResponse, [AuthInternalErrors.userInfoDeserializedResponseKey: other])
        case nil: (.unexpectedResponse, [AuthInternalErrors.userInfoDataKey: Data(body)])
        }
        return AuthError(.internalError, "\(endpoint) answered 200 with a body the SDK cannot read: \(why)",
                         underlyingError: NSError(domain: AuthInternalErrors.domain, code: code.rawValue, userInfo: info))
    }

    /// `localizedDescription` as the SDK's `AuthErrorUtils` makes it for a server error: the
    /// detail after `CODE : ` (the code's own message when there is none), except where the SDK's
    /// constructor takes no message (`EMAIL_EXISTS`, `TENANT_ID_MISMATCH`,
    /// `UNSUPPORTED_TENANT_OPERATION`, `MISSING_IOS_APP_TOKEN`, `WEAK_PASSWORD`, the key's
    /// reasons, an unmapped message) and for a blocking function, whose detail holds JSON whose
    /// `error.message` is the description.
    package static func sdkDescription(_ code: AuthErrorCode, serverMessage: String) -> String {
        switch code {
        case .emailAlreadyInUse, .tenantIDMismatch, .unsupportedTenantOperation, .missingAppToken, .weakPassword,
             .invalidAPIKey, .appNotAuthorized, .internalError:
            return code.errorDescription
        case .blockingCloudFunctionError:
            guard let detail = IdentityToolkitError(message: serverMessage, status: 400).detail else { return code.errorDescription }
            guard let json = firstJSONObject(in: detail) else { return detail }
            return ((json["error"] as? [String: Any])?["message"] as? String) ?? code.errorDescription
        default:
            guard let detail = IdentityToolkitError(message: serverMessage, status: 400).detail, !detail.isEmpty else {
                return code.errorDescription
            }
            return detail
        }
    }

    /// The first balanced `{…}` in `text`, as a JSON object (the SDK's `extractJSONObjectFromString`).
    static func firstJSONObject(in text: String) -> [String: Any]? {
        guard let start = text.firstIndex(of: "{") else { return nil }
        var depth = 0
        for index in text[start...].indices {
            switch text[index] {
            case "{": depth += 1
            case "}":
                depth -= 1
                if depth == 0 {
                    let slice = Data(text[start...index].utf8)
                    return (try? JSONSerialization.jsonObject(with: slice)) as? [String: Any]
                }
            default: break
            }
        }
        return nil
    }
}
