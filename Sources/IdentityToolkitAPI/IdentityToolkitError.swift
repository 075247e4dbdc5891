import Utilities

/// An Identity Toolkit error: the server's code (`INVALID_CODE`), an optional detail, and the HTTP
/// status. On the wire it is Google's envelope (``ErrorResponse``) whose message is `CODE` or
/// `CODE : detail`, as the real service writes it and the SDK splits it (at the first colon).
///
/// The backend throws these; the auth core reads them back from the envelope.
///
/// ```swift
/// throw IdentityToolkitError(.invalidPhoneNumber, "TOO_SHORT")
/// // 400 {"error":{"code":400,"message":"INVALID_PHONE_NUMBER : TOO_SHORT",…}}
/// ```
package struct IdentityToolkitError: CodedError, Codable {
    package let code: Code
    package let detail: String?
    /// The HTTP status it is answered with.
    package let httpStatus: Int
    /// Set for what Google's API front end answers before Identity Toolkit sees the request (a
    /// missing, invalid or restricted API key): a sentence rather than `CODE : detail`, with
    /// Google's reason, status and `ErrorInfo`.
    package let frontend: Frontend?

    /// - Parameter status: the HTTP status; by default the one the service answers with `code`.
    package init(_ code: Code, _ detail: String? = nil, status: Int? = nil) {
        self.code = code
        self.detail = detail
        self.httpStatus = status ?? code.defaultStatus
        self.frontend = nil
    }

    /// A front-end error: `code` names it here (it is not on the wire), `frontend` is what is.
    package init(_ code: Code, frontend: Frontend, status: Int) {
        self.code = code
        self.detail = frontend.message
        self.httpStatus = status
        self.frontend = frontend
    }

    /// `CODE` or `CODE : detail`; a front-end error's sentence.
    package var message: String {
        if let frontend { return frontend.message }
        return detail.map { "\(code.rawValue) : \($0)" } ?? code.rawValue
    }

    /// Google's error envelope for this error.
    package var response: ErrorResponse {
        if let frontend {
            let details = frontend.errorInfo.map { info in
                [ErrorResponse.Detail(type: ErrorResponse.Detail.errorInfoType, reason: info, domain: "googleapis.com",
                                      metadata: ["service": frontend.service].merging(frontend.consumer.map { ["consumer": $0] } ?? [:]) { a, _ in a })]
            }
            return ErrorResponse(error: .init(code: httpStatus, message: frontend.message,
                                              errors: [.init(message: frontend.message, reason: frontend.reason, domain: "global")],
                                              status: frontend.status, details: details))
        }
        let reason = switch httpStatus {
        case 403: "forbidden"
        case 404: "notFound"
        default: "invalid"
        }
        return ErrorResponse(error: .init(code: httpStatus, message: message,
                                          errors: [.init(message: message, reason: reason, domain: "global")]))
    }

    /// What Google's front end writes in an envelope: the sentence, `errors[0].reason`, `status`,
    /// and the `ErrorInfo` detail's reason (`API_KEY_INVALID`, `API_KEY_IOS_APP_BLOCKED`).
    package struct Frontend: Sendable, Hashable, Codable {
        package var message: String
        package var reason: String
        package var status: String
        package var errorInfo: String?
        package var service: String
        package var consumer: String?
        package init(message: String, reason: String, status: String, errorInfo: String?,
                    service: String = "identitytoolkit.googleapis.com", consumer: String? = nil) {
            self.message = message
            self.reason = reason
            self.status = status
            self.errorInfo = errorInfo
            self.service = service
            self.consumer = consumer
        }
    }

    /// No API key: 403 `The request is missing a valid API key.` (`forbidden`, `PERMISSION_DENIED`).
    package static func apiKeyMissing() -> IdentityToolkitError {
        IdentityToolkitError(.permissionDenied, frontend: Frontend(message: "The request is missing a valid API key.", reason: "forbidden",
                                                                    status: "PERMISSION_DENIED", errorInfo: nil), status: 403)
    }

    /// A key that is not the project's: 400 `API key not valid. Please pass a valid API key.`
    /// (`badRequest`, `INVALID_ARGUMENT`, `API_KEY_INVALID`), as the service answers today (the
    /// SDK's `keyInvalid` reason is an older service's; today's answer is 17999 in the SDK).
    package static func apiKeyInvalid() -> IdentityToolkitError {
        IdentityToolkitError(.apiKeyInvalid, frontend: Frontend(message: "API key not valid. Please pass a valid API key.", reason: "badRequest",
                                                                 status: "INVALID_ARGUMENT", errorInfo: "API_KEY_INVALID"), status: 400)
    }

    /// A key restricted to iOS apps the request's `X-Ios-Bundle-Identifier` is not among: 403
    /// `Requests from this iOS client application <bundle> are blocked.` (`<empty>` without the
    /// header; `forbidden`, `PERMISSION_DENIED`, `API_KEY_IOS_APP_BLOCKED`).
    package static func iosAppBlocked(bundleID: String?, projectNumber: String) -> IdentityToolkitError {
        let who = bundleID.flatMap { $0.isEmpty ? nil : $0 } ?? "<empty>"
        return IdentityToolkitError(.apiKeyIOSAppBlocked, frontend: Frontend(
            message: "Requests from this iOS client application \(who) are blocked.", reason: "forbidden", status: "PERMISSION_DENIED",
            errorInfo: "API_KEY_IOS_APP_BLOCKED", consumer: "projects/\(projectNumber)"), status: 403)
    }

    /// A body with a field the REST API does not have: 400 `Invalid JSON payload received. Unknown
    /// name "x": Cannot find field.` (`invalid`, `INVALID_ARGUMENT`), as Google's front end and the
    /// Auth Emulator answer.
    package static func unknownField(_ name: String, at path: String? = nil) -> IdentityToolkitError {
        let where_ = path.map { " at '\($0)'" } ?? ""
        let message = "Invalid JSON payload received. Unknown name \"\(name)\"\(where_): Cannot find field."
        return IdentityToolkitError(.invalidJSON, frontend: Frontend(message: message, reason: "invalid", status: "INVALID_ARGUMENT",
                                                                      errorInfo: nil), status: 400)
    }

    /// The service cannot answer now: 503 `The service is currently unavailable.` (`backendError`,
    /// `UNAVAILABLE`), what Google's front end answers while a service behind it is down. The
    /// backend answers it when its shared store cannot be reached (issue 28), and logs the cause;
    /// the client sees only the sentence, as from Google.
    package static func unavailable() -> IdentityToolkitError {
        IdentityToolkitError(.unavailable, frontend: Frontend(message: "The service is currently unavailable.", reason: "backendError",
                                                               status: "UNAVAILABLE", errorInfo: nil), status: 503)
    }

    /// An Admin call without an OAuth 2 bearer token: 401, in the Auth Emulator's words.
    package static func missingCredential() -> IdentityToolkitError {
        IdentityToolkitError(.unauthenticated, frontend: Frontend(
            message: "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.",
            reason: "required", status: "UNAUTHENTICATED", errorInfo: nil), status: 401)
    }

    /// An Admin call whose bearer token is neither `owner` (what the Admin SDKs send an emulator)
    /// nor a Google access token (`ya29.…`): 401 `Invalid Credentials`, as the emulator answers.
    /// - Parameter reason: authsim's own sentence, after Google's, for a refusal Google has no
    ///   words for (a deployment's admin token; ``AdminAccess``).
    package static func invalidCredential(reason: String? = nil) -> IdentityToolkitError {
        IdentityToolkitError(.unauthenticated, frontend: Frontend(
            message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."
                + (reason.map { " (authsim: \($0))" } ?? ""),
            reason: "authError", status: "UNAUTHENTICATED", errorInfo: nil), status: 401)
    }

    /// The envelope as JSON bytes.
    package var body: [UInt8] {
        // Strings and numbers always encode.
        (try? IdentityToolkitJSON.encode(response)) ?? Array(#"{"error":{"code":500,"message":"INTERNAL"}}"#.utf8)
    }

    /// Reads an envelope's message back into an error (the code before the first colon, the
    /// detail after it, both trimmed), as the SDK's `splitStringAtFirstColon` does.
    package init(message: String, status: Int) {
        let parts = message.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let code = parts[0].trimmingCharacters(in: .whitespaces)
        let detail = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : nil
        self.init(Code(rawValue: code), detail.flatMap { $0.isEmpty ? nil : $0 }, status: status)
    }
}

extension IdentityToolkitError {
    /// A server error code. A struct rather than an enum so that codes this toolkit does not know
    /// yet still travel (and compare) as themselves; the known ones are constants.
    /// Not a string literal: a code the rules give is a constant here, so that it is spelled once.
    package struct Code: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }
        package var description: String { rawValue }

        /// The HTTP status the service answers with this code.
        package var defaultStatus: Int {
            switch self {
            case .unauthenticated: 401
            case .permissionDenied, .apiKeyIOSAppBlocked: 403
            case .notFound: 404
            case .methodNotAllowed: 405
            case .payloadTooLarge: 413
            case .notImplemented: 501
            case .stateUnavailable, .stateCorrupt, .stateFormat, .internal: 500
            case .unavailable: 503
            default: 400
            }
        }

        // Phone sign-in (`sendVerificationCode`, `signInWithPhoneNumber`).
        package static let missingPhoneNumber = Self(rawValue: "MISSING_PHONE_NUMBER")
        package static let invalidPhoneNumber = Self(rawValue: "INVALID_PHONE_NUMBER")
        package static let missingSessionInfo = Self(rawValue: "MISSING_SESSION_INFO")
        package static let invalidSessionInfo = Self(rawValue: "INVALID_SESSION_INFO")
        package static let missingCode = Self(rawValue: "MISSING_CODE")
        package static let invalidCode = Self(rawValue: "INVALID_CODE")
        package static let sessionExpired = Self(rawValue: "SESSION_EXPIRED")
        package static let invalidTemporaryProof = Self(rawValue: "INVALID_TEMPORARY_PROOF")
        package static let phoneNumberExists = Self(rawValue: "PHONE_NUMBER_EXISTS")
        package static let quotaExceeded = Self(rawValue: "QUOTA_EXCEEDED")
        package static let tooManyAttemptsTryLater = Self(rawValue: "TOO_MANY_ATTEMPTS_TRY_LATER")
        package static let operationNotAllowed = Self(rawValue: "OPERATION_NOT_ALLOWED")
        // App verification (`verifyClient`, the app credential, reCAPTCHA).
        package static let missingIOSAppToken = Self(rawValue: "MISSING_IOS_APP_TOKEN")
        package static let missingAppCredential = Self(rawValue: "MISSING_APP_CREDENTIAL")
        package static let invalidAppCredential = Self(rawValue: "INVALID_APP_CREDENTIAL")
        package static let appNotVerified = Self(rawValue: "APP_NOT_VERIFIED")
        package static let captchaCheckFailed = Self(rawValue: "CAPTCHA_CHECK_FAILED")
        package static let missingClientIdentifier = Self(rawValue: "MISSING_CLIENT_IDENTIFIER")
        package static let missingRecaptchaToken = Self(rawValue: "MISSING_RECAPTCHA_TOKEN")
        package static let invalidRecaptchaToken = Self(rawValue: "INVALID_RECAPTCHA_TOKEN")
        package static let missingRecaptchaVersion = Self(rawValue: "MISSING_RECAPTCHA_VERSION")
        package static let invalidRecaptchaVersion = Self(rawValue: "INVALID_RECAPTCHA_VERSION")
        package static let invalidReqType = Self(rawValue: "INVALID_REQ_TYPE")
        package static let missingClientType = Self(rawValue: "MISSING_CLIENT_TYPE")
        package static let invalidRecaptchaAction = Self(rawValue: "INVALID_RECAPTCHA_ACTION")
        package static let recaptchaNotEnabled = Self(rawValue: "RECAPTCHA_NOT_ENABLED")
        /// The simulated reCAPTCHA Enterprise service's: a site key that is not the project's, or
        /// not for this app.
        package static let invalidSiteKey = Self(rawValue: "INVALID_SITE_KEY")
        // Accounts and tokens.
        package static let userNotFound = Self(rawValue: "USER_NOT_FOUND")
        package static let userDisabled = Self(rawValue: "USER_DISABLED")
        package static let invalidIDToken = Self(rawValue: "INVALID_ID_TOKEN")
        package static let tokenExpired = Self(rawValue: "TOKEN_EXPIRED")
        package static let invalidRefreshToken = Self(rawValue: "INVALID_REFRESH_TOKEN")
        package static let invalidGrantType = Self(rawValue: "INVALID_GRANT_TYPE")
        package static let missingRefreshToken = Self(rawValue: "MISSING_REFRESH_TOKEN")
        package static let invalidCustomToken = Self(rawValue: "INVALID_CUSTOM_TOKEN")
        package static let credentialMismatch = Self(rawValue: "CREDENTIAL_MISMATCH")
        package static let credentialTooOldLoginAgain = Self(rawValue: "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
        package static let duplicateLocalID = Self(rawValue: "DUPLICATE_LOCAL_ID")
        package static let emailExists = Self(rawValue: "EMAIL_EXISTS")
        package static let adminOnlyOperation = Self(rawValue: "ADMIN_ONLY_OPERATION")
        // Identity providers (Sign in with Apple).
        package static let missingOrInvalidProviderID = Self(rawValue: "MISSING_OR_INVALID_PROVIDER_ID")
        package static let invalidProviderID = Self(rawValue: "INVALID_PROVIDER_ID")
        package static let invalidIDPResponse = Self(rawValue: "INVALID_IDP_RESPONSE")
        package static let missingRequestURI = Self(rawValue: "MISSING_REQUEST_URI")
        package static let invalidRequestURI = Self(rawValue: "INVALID_REQUEST_URI")
        package static let invalidPendingToken = Self(rawValue: "INVALID_PENDING_TOKEN")
        package static let missingOrInvalidNonce = Self(rawValue: "MISSING_OR_INVALID_NONCE")
        package static let federatedUserIDAlreadyLinked = Self(rawValue: "FEDERATED_USER_ID_ALREADY_LINKED")
        package static let providerAlreadyLinked = Self(rawValue: "PROVIDER_ALREADY_LINKED")
        // Multi-factor.
        package static let missingMFAPendingCredential = Self(rawValue: "MISSING_MFA_PENDING_CREDENTIAL")
        package static let invalidMFAPendingCredential = Self(rawValue: "INVALID_MFA_PENDING_CREDENTIAL")
        package static let missingMFAEnrollmentID = Self(rawValue: "MISSING_MFA_ENROLLMENT_ID")
        package static let mfaEnrollmentNotFound = Self(rawValue: "MFA_ENROLLMENT_NOT_FOUND")
        package static let secondFactorExists = Self(rawValue: "SECOND_FACTOR_EXISTS")
        package static let secondFactorLimitExceeded = Self(rawValue: "SECOND_FACTOR_LIMIT_EXCEEDED")
        package static let unsupportedFirstFactor = Self(rawValue: "UNSUPPORTED_FIRST_FACTOR")
        package static let unverifiedEmail = Self(rawValue: "UNVERIFIED_EMAIL")
        // Tenants, blocking functions.
        package static let tenantIDMismatch = Self(rawValue: "TENANT_ID_MISMATCH")
        package static let unsupportedTenantOperation = Self(rawValue: "UNSUPPORTED_TENANT_OPERATION")
        package static let tenantNotFound = Self(rawValue: "TENANT_NOT_FOUND")
        /// A tenant with `disableAuth` (the emulator's, and Google's, PROJECT_DISABLED).
        package static let projectDisabled = Self(rawValue: "PROJECT_DISABLED")
        package static let passwordLoginDisabled = Self(rawValue: "PASSWORD_LOGIN_DISABLED")
        package static let blockingFunctionErrorResponse = Self(rawValue: "BLOCKING_FUNCTION_ERROR_RESPONSE")
        // User management (the Admin SDKs' calls) and custom tokens.
        package static let missingLocalID = Self(rawValue: "MISSING_LOCAL_ID")
        package static let invalidEmail = Self(rawValue: "INVALID_EMAIL")
        package static let invalidMFAPhoneNumber = Self(rawValue: "INVALID_MFA_PHONE_NUMBER")
        package static let localIDListExceedsLimit = Self(rawValue: "LOCAL_ID_LIST_EXCEEDS_LIMIT")
        package static let missingUserAccount = Self(rawValue: "MISSING_USER_ACCOUNT")
        package static let invalidClaims = Self(rawValue: "INVALID_CLAIMS")
        package static let claimsTooLarge = Self(rawValue: "CLAIMS_TOO_LARGE")
        package static let forbiddenClaim = Self(rawValue: "FORBIDDEN_CLAIM")
        package static let missingCustomToken = Self(rawValue: "MISSING_CUSTOM_TOKEN")
        package static let missingIdentifier = Self(rawValue: "MISSING_IDENTIFIER")
        package static let unexpectedParameter = Self(rawValue: "UNEXPECTED_PARAMETER")
        package static let insufficientPermission = Self(rawValue: "INSUFFICIENT_PERMISSION")
        package static let invalidIdentifier = Self(rawValue: "INVALID_IDENTIFIER")
        /// The project is not this backend's (the service's answer for a project without Identity Toolkit).
        package static let configurationNotFound = Self(rawValue: "CONFIGURATION_NOT_FOUND")
        package static let unauthenticated = Self(rawValue: "UNAUTHENTICATED")
        package static let invalidArgument = Self(rawValue: "INVALID_ARGUMENT")
        // Email and password, and the emails' codes.
        package static let missingEmail = Self(rawValue: "MISSING_EMAIL")
        package static let missingNewEmail = Self(rawValue: "MISSING_NEW_EMAIL")
        package static let missingPassword = Self(rawValue: "MISSING_PASSWORD")
        package static let weakPassword = Self(rawValue: "WEAK_PASSWORD")
        package static let emailNotFound = Self(rawValue: "EMAIL_NOT_FOUND")
        package static let invalidPassword = Self(rawValue: "INVALID_PASSWORD")
        package static let invalidLoginCredentials = Self(rawValue: "INVALID_LOGIN_CREDENTIALS")
        package static let missingOobCode = Self(rawValue: "MISSING_OOB_CODE")
        package static let invalidOobCode = Self(rawValue: "INVALID_OOB_CODE")
        package static let expiredOobCode = Self(rawValue: "EXPIRED_OOB_CODE")
        package static let missingReqType = Self(rawValue: "MISSING_REQ_TYPE")
        package static let missingContinueURI = Self(rawValue: "MISSING_CONTINUE_URI")
        package static let invalidContinueURI = Self(rawValue: "INVALID_CONTINUE_URI")
        package static let missingIDToken = Self(rawValue: "MISSING_ID_TOKEN")
        package static let duplicateRawID = Self(rawValue: "DUPLICATE_RAW_ID")
        // Apple's side (`/appleid/auth/…`), in OAuth 2's words.
        package static let oauthInvalidRequest = Self(rawValue: "invalid_request")
        package static let oauthServerError = Self(rawValue: "server_error")
        /// A field of the REST API this backend does not implement (tenants, email links, passwords).
        package static let unsupportedField = Self(rawValue: "UNSUPPORTED_FIELD")
        // The request itself.
        package static let permissionDenied = Self(rawValue: "PERMISSION_DENIED")
        package static let apiKeyInvalid = Self(rawValue: "API_KEY_INVALID")
        /// The key is restricted to iOS apps and the request's bundle ID is not one of them.
        package static let apiKeyIOSAppBlocked = Self(rawValue: "API_KEY_IOS_APP_BLOCKED")
        package static let invalidJSON = Self(rawValue: "INVALID_JSON")
        package static let invalidRequest = Self(rawValue: "INVALID_REQUEST")
        package static let notFound = Self(rawValue: "NOT_FOUND")
        package static let methodNotAllowed = Self(rawValue: "METHOD_NOT_ALLOWED")
        package static let payloadTooLarge = Self(rawValue: "PAYLOAD_TOO_LARGE")
        package static let notImplemented = Self(rawValue: "NOT_IMPLEMENTED")
        package static let `internal` = Self(rawValue: "INTERNAL")
        // This toolkit's own: the backend's configuration and state.
        /// A configuration the backend refuses (test numbers, reCAPTCHA outcome, …).
        package static let invalidConfig = Self(rawValue: "INVALID_CONFIG")
        /// The state folder cannot be written.
        package static let stateUnavailable = Self(rawValue: "STATE_UNAVAILABLE")
        /// The front end's 503 (``IdentityToolkitError/unavailable()``): not on the wire as a code.
        package static let unavailable = Self(rawValue: "UNAVAILABLE")
        /// The state folder holds something the backend cannot read.
        package static let stateCorrupt = Self(rawValue: "STATE_CORRUPT")
        /// The state folder holds a format version this build does not read (a newer authsim wrote it).
        package static let stateFormat = Self(rawValue: "STATE_FORMAT")
    }
}

/// Google's error envelope: `{"error":{"code":400,"message":"INVALID_CODE","errors":[{"message":"INVALID_CODE","reason":"invalid","domain":"global"}]}}`.
package struct ErrorResponse: Codable, Sendable, Hashable {
    package struct Body: Codable, Sendable, Hashable {
        package var code: Int
        package var message: String
        package var errors: [Item]?
        /// `INVALID_ARGUMENT`, … (newer Google APIs add it).
        package var status: String?
        /// `google.rpc.ErrorInfo` and the like (the front end's API-key errors carry one).
        package var details: [Detail]?
        package init(code: Int, message: String, errors: [Item]? = nil, status: String? = nil, details: [Detail]? = nil) {
            self.code = code
            self.message = message
            self.errors = errors
            self.status = status
            self.details = details
        }
    }
    /// One of `error.details`: `{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": …}`.
    package struct Detail: Codable, Sendable, Hashable {
        package static let errorInfoType = "type.googleapis.com/google.rpc.ErrorInfo"
        package var type: String
        package var reason: String?
        package var domain: String?
        package var metadata: [String: String]?
        package init(type: String, reason: String?, domain: String?, metadata: [String: String]?) {
            self.type = type
            self.reason = reason
            self.domain = domain
            self.metadata = metadata
        }
        enum CodingKeys: String, CodingKey {
            case type = "@type", reason, domain, metadata
        }
    }
    package struct Item: Codable, Sendable, Hashable {
        package var message: String?
        /// `invalid`, `forbidden`, `notFound`; `keyInvalid…` and `ipRefererBlocked` for API-key problems.
        package var reason: String?
        package var domain: String?
        package init(message: String?, reason: String?, domain: String?) {
            self.message = message
            self.reason = reason
            self.domain = domain
        }
    }
    package var error: Body
    package init(error: Body) { self.error = error }
}
