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
public struct IdentityToolkitError: CodedError, Codable {
    public let code: Code
    public let detail: String?
    /// The HTTP status it is answered with.
    public let httpStatus: Int
    /// Set for what Google's API front end answers before Identity Toolkit sees the request (a
    /// missing, invalid or restricted API key): a sentence rather than `CODE : detail`, with
    /// Google's reason, status and `ErrorInfo`.
    public let frontend: Frontend?

    /// - Parameter status: the HTTP status; by default the one the service answers with `code`.
    public init(_ code: Code, _ detail: String? = nil, status: Int? = nil) {
        self.code = code
        self.detail = detail
        self.httpStatus = status ?? code.defaultStatus
        self.frontend = nil
    }

    /// A front-end error: `code` names it here (it is not on the wire), `frontend` is what is.
    public init(_ code: Code, frontend: Frontend, status: Int) {
        self.code = code
        self.detail = frontend.message
        self.httpStatus = status
        self.frontend = frontend
    }

    /// `CODE` or `CODE : detail`; a front-end error's sentence.
    public var message: String {
        if let frontend { return frontend.message }
        return detail.map { "\(code.rawValue) : \($0)" } ?? code.rawValue
    }

    /// Google's error envelope for this error.
    public var response: ErrorResponse {
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
    public struct Frontend: Sendable, Hashable, Codable {
        public var message: String
        public var reason: String
        public var status: String
        public var errorInfo: String?
        public var service: String
        public var consumer: String?
        public init(message: String, reason: String, status: String, errorInfo: String?,
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
    public static func apiKeyMissing() -> IdentityToolkitError {
        IdentityToolkitError(.permissionDenied, frontend: Frontend(message: "The request is missing a valid API key.", reason: "forbidden",
                                                                    status: "PERMISSION_DENIED", errorInfo: nil), status: 403)
    }

    /// A key that is not the project's: 400 `API key not valid. Please pass a valid API key.`
    /// (`badRequest`, `INVALID_ARGUMENT`, `API_KEY_INVALID`), as the service answers today (the
    /// SDK's `keyInvalid` reason is an older service's; today's answer is 17999 in the SDK).
    public static func apiKeyInvalid() -> IdentityToolkitError {
        IdentityToolkitError(.apiKeyInvalid, frontend: Frontend(message: "API key not valid. Please pass a valid API key.", reason: "badRequest",
                                                                 status: "INVALID_ARGUMENT", errorInfo: "API_KEY_INVALID"), status: 400)
    }

    /// A key restricted to iOS apps the request's `X-Ios-Bundle-Identifier` is not among: 403
    /// `Requests from this iOS client application <bundle> are blocked.` (`<empty>` without the
    /// header; `forbidden`, `PERMISSION_DENIED`, `API_KEY_IOS_APP_BLOCKED`).
    public static func iosAppBlocked(bundleID: String?, projectNumber: String) -> IdentityToolkitError {
        let who = bundleID.flatMap { $0.isEmpty ? nil : $0 } ?? "<empty>"
        return IdentityToolkitError(.apiKeyIOSAppBlocked, frontend: Frontend(
            message: "Requests from this iOS client application \(who) are blocked.", reason: "forbidden", status: "PERMISSION_DENIED",
            errorInfo: "API_KEY_IOS_APP_BLOCKED", consumer: "projects/\(projectNumber)"), status: 403)
    }

    /// A body with a field the REST API does not have: 400 `Invalid JSON payload received. Unknown
    /// name "x": Cannot find field.` (`invalid`, `INVALID_ARGUMENT`), as Google's front end and the
    /// Auth Emulator answer.
    public static func unknownField(_ name: String, at path: String? = nil) -> IdentityToolkitError {
        let where_ = path.map { " at '\($0)'" } ?? ""
        let message = "Invalid JSON payload received. Unknown name \"\(name)\"\(where_): Cannot find field."
        return IdentityToolkitError(.invalidJSON, frontend: Frontend(message: message, reason: "invalid", status: "INVALID_ARGUMENT",
                                                                      errorInfo: nil), status: 400)
    }

    /// The service cannot answer now: 503 `The service is currently unavailable.` (`backendError`,
    /// `UNAVAILABLE`), what Google's front end answers while a service behind it is down. The
    /// backend answers it when its shared store cannot be reached (issue 28), and logs the cause;
    /// the client sees only the sentence, as from Google.
    public static func unavailable() -> IdentityToolkitError {
        IdentityToolkitError(.unavailable, frontend: Frontend(message: "The service is currently unavailable.", reason: "backendError",
                                                               status: "UNAVAILABLE", errorInfo: nil), status: 503)
    }

    /// An Admin call without an OAuth 2 bearer token: 401, in the Auth Emulator's words.
    public static func missingCredential() -> IdentityToolkitError {
        IdentityToolkitError(.unauthenticated, frontend: Frontend(
            message: "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.",
            reason: "required", status: "UNAUTHENTICATED", errorInfo: nil), status: 401)
    }

    /// An Admin call whose bearer token is neither `owner` (what the Admin SDKs send an emulator)
    /// nor a Google access token (`ya29.…`): 401 `Invalid Credentials`, as the emulator answers.
    /// - Parameter reason: authsim's own sentence, after Google's, for a refusal Google has no
    ///   words for (a deployment's admin token; ``AdminAccess``).
    public static func invalidCredential(reason: String? = nil) -> IdentityToolkitError {
        IdentityToolkitError(.unauthenticated, frontend: Frontend(
            message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."
                + (reason.map { " (authsim: \($0))" } ?? ""),
            reason: "authError", status: "UNAUTHENTICATED", errorInfo: nil), status: 401)
    }

    /// The envelope as JSON bytes.
    public var body: [UInt8] {
        // Strings and numbers always encode.
        (try? IdentityToolkitJSON.encode(response)) ?? Array(#"{"error":{"code":500,"message":"INTERNAL"}}"#.utf8)
    }

    /// Reads an envelope's message back into an error (the code before the first colon, the
    /// detail after it, both trimmed), as the SDK's `splitStringAtFirstColon` does.
    public init(message: String, status: Int) {
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
    public struct Code: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The HTTP status the service answers with this code.
        public var defaultStatus: Int {
            switch self {
            case .unauthenticated: 401
            case .permissionDenied, .apiKeyIOSAppBlocked: 403
            case .notFound: 404
            case .methodNotAllowed: 405
            case .payloadTooLarge: 413
            case .notImplemented: 501
            case .stateUnavailable, .stateCorrupt, .internal: 500
            case .unavailable: 503
            default: 400
            }
        }

        // Phone sign-in (`sendVerificationCode`, `signInWithPhoneNumber`).
        public static let missingPhoneNumber = Self(rawValue: "MISSING_PHONE_NUMBER")
        public static let invalidPhoneNumber = Self(rawValue: "INVALID_PHONE_NUMBER")
        public static let missingSessionInfo = Self(rawValue: "MISSING_SESSION_INFO")
        public static let invalidSessionInfo = Self(rawValue: "INVALID_SESSION_INFO")
        public static let missingCode = Self(rawValue: "MISSING_CODE")
        public static let invalidCode = Self(rawValue: "INVALID_CODE")
        public static let sessionExpired = Self(rawValue: "SESSION_EXPIRED")
        public static let invalidTemporaryProof = Self(rawValue: "INVALID_TEMPORARY_PROOF")
        public static let phoneNumberExists = Self(rawValue: "PHONE_NUMBER_EXISTS")
        public static let quotaExceeded = Self(rawValue: "QUOTA_EXCEEDED")
        public static let tooManyAttemptsTryLater = Self(rawValue: "TOO_MANY_ATTEMPTS_TRY_LATER")
        public static let operationNotAllowed = Self(rawValue: "OPERATION_NOT_ALLOWED")
        // App verification (`verifyClient`, the app credential, reCAPTCHA).
        public static let missingIOSAppToken = Self(rawValue: "MISSING_IOS_APP_TOKEN")
        public static let missingAppCredential = Self(rawValue: "MISSING_APP_CREDENTIAL")
        public static let invalidAppCredential = Self(rawValue: "INVALID_APP_CREDENTIAL")
        public static let appNotVerified = Self(rawValue: "APP_NOT_VERIFIED")
        public static let captchaCheckFailed = Self(rawValue: "CAPTCHA_CHECK_FAILED")
        public static let missingClientIdentifier = Self(rawValue: "MISSING_CLIENT_IDENTIFIER")
        public static let missingRecaptchaToken = Self(rawValue: "MISSING_RECAPTCHA_TOKEN")
        public static let invalidRecaptchaToken = Self(rawValue: "INVALID_RECAPTCHA_TOKEN")
        public static let missingRecaptchaVersion = Self(rawValue: "MISSING_RECAPTCHA_VERSION")
        public static let invalidRecaptchaVersion = Self(rawValue: "INVALID_RECAPTCHA_VERSION")
        public static let invalidReqType = Self(rawValue: "INVALID_REQ_TYPE")
        public static let missingClientType = Self(rawValue: "MISSING_CLIENT_TYPE")
        public static let invalidRecaptchaAction = Self(rawValue: "INVALID_RECAPTCHA_ACTION")
        public static let recaptchaNotEnabled = Self(rawValue: "RECAPTCHA_NOT_ENABLED")
        /// The simulated reCAPTCHA Enterprise service's: a site key that is not the project's, or
        /// not for this app.
        public static let invalidSiteKey = Self(rawValue: "INVALID_SITE_KEY")
        // Accounts and tokens.
        public static let userNotFound = Self(rawValue: "USER_NOT_FOUND")
        public static let userDisabled = Self(rawValue: "USER_DISABLED")
        public static let invalidIDToken = Self(rawValue: "INVALID_ID_TOKEN")
        public static let tokenExpired = Self(rawValue: "TOKEN_EXPIRED")
        public static let invalidRefreshToken = Self(rawValue: "INVALID_REFRESH_TOKEN")
        public static let invalidGrantType = Self(rawValue: "INVALID_GRANT_TYPE")
        public static let missingRefreshToken = Self(rawValue: "MISSING_REFRESH_TOKEN")
        public static let invalidCustomToken = Self(rawValue: "INVALID_CUSTOM_TOKEN")
        public static let credentialMismatch = Self(rawValue: "CREDENTIAL_MISMATCH")
        public static let credentialTooOldLoginAgain = Self(rawValue: "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
        public static let duplicateLocalID = Self(rawValue: "DUPLICATE_LOCAL_ID")
        public static let emailExists = Self(rawValue: "EMAIL_EXISTS")
        public static let adminOnlyOperation = Self(rawValue: "ADMIN_ONLY_OPERATION")
        // Identity providers (Sign in with Apple).
        public static let missingOrInvalidProviderID = Self(rawValue: "MISSING_OR_INVALID_PROVIDER_ID")
        public static let invalidProviderID = Self(rawValue: "INVALID_PROVIDER_ID")
        public static let invalidIDPResponse = Self(rawValue: "INVALID_IDP_RESPONSE")
        public static let invalidPendingToken = Self(rawValue: "INVALID_PENDING_TOKEN")
        public static let missingOrInvalidNonce = Self(rawValue: "MISSING_OR_INVALID_NONCE")
        public static let federatedUserIDAlreadyLinked = Self(rawValue: "FEDERATED_USER_ID_ALREADY_LINKED")
        public static let providerAlreadyLinked = Self(rawValue: "PROVIDER_ALREADY_LINKED")
        // Multi-factor.
        public static let missingMFAPendingCredential = Self(rawValue: "MISSING_MFA_PENDING_CREDENTIAL")
        public static let invalidMFAPendingCredential = Self(rawValue: "INVALID_MFA_PENDING_CREDENTIAL")
        public static let missingMFAEnrollmentID = Self(rawValue: "MISSING_MFA_ENROLLMENT_ID")
        public static let mfaEnrollmentNotFound = Self(rawValue: "MFA_ENROLLMENT_NOT_FOUND")
        public static let secondFactorExists = Self(rawValue: "SECOND_FACTOR_EXISTS")
        public static let secondFactorLimitExceeded = Self(rawValue: "SECOND_FACTOR_LIMIT_EXCEEDED")
        public static let unsupportedFirstFactor = Self(rawValue: "UNSUPPORTED_FIRST_FACTOR")
        public static let unverifiedEmail = Self(rawValue: "UNVERIFIED_EMAIL")
        // Tenants, blocking functions.
        public static let tenantIDMismatch = Self(rawValue: "TENANT_ID_MISMATCH")
        public static let unsupportedTenantOperation = Self(rawValue: "UNSUPPORTED_TENANT_OPERATION")
        public static let blockingFunctionErrorResponse = Self(rawValue: "BLOCKING_FUNCTION_ERROR_RESPONSE")
        // User management (the Admin SDKs' calls) and custom tokens.
        public static let missingLocalID = Self(rawValue: "MISSING_LOCAL_ID")
        public static let invalidEmail = Self(rawValue: "INVALID_EMAIL")
        public static let invalidMFAPhoneNumber = Self(rawValue: "INVALID_MFA_PHONE_NUMBER")
        public static let localIDListExceedsLimit = Self(rawValue: "LOCAL_ID_LIST_EXCEEDS_LIMIT")
        public static let missingUserAccount = Self(rawValue: "MISSING_USER_ACCOUNT")
        public static let invalidClaims = Self(rawValue: "INVALID_CLAIMS")
        public static let claimsTooLarge = Self(rawValue: "CLAIMS_TOO_LARGE")
        public static let forbiddenClaim = Self(rawValue: "FORBIDDEN_CLAIM")
        public static let missingCustomToken = Self(rawValue: "MISSING_CUSTOM_TOKEN")
        public static let missingIdentifier = Self(rawValue: "MISSING_IDENTIFIER")
        public static let unexpectedParameter = Self(rawValue: "UNEXPECTED_PARAMETER")
        public static let insufficientPermission = Self(rawValue: "INSUFFICIENT_PERMISSION")
        public static let invalidIdentifier = Self(rawValue: "INVALID_IDENTIFIER")
        /// The project is not this backend's (the service's answer for a project without Identity Toolkit).
        public static let configurationNotFound = Self(rawValue: "CONFIGURATION_NOT_FOUND")
        public static let unauthenticated = Self(rawValue: "UNAUTHENTICATED")
        public static let invalidArgument = Self(rawValue: "INVALID_ARGUMENT")
        // Email and password, and the emails' codes.
        public static let missingEmail = Self(rawValue: "MISSING_EMAIL")
        public static let missingNewEmail = Self(rawValue: "MISSING_NEW_EMAIL")
        public static let missingPassword = Self(rawValue: "MISSING_PASSWORD")
        public static let weakPassword = Self(rawValue: "WEAK_PASSWORD")
        public static let emailNotFound = Self(rawValue: "EMAIL_NOT_FOUND")
        public static let invalidPassword = Self(rawValue: "INVALID_PASSWORD")
        public static let invalidLoginCredentials = Self(rawValue: "INVALID_LOGIN_CREDENTIALS")
        public static let missingOobCode = Self(rawValue: "MISSING_OOB_CODE")
        public static let invalidOobCode = Self(rawValue: "INVALID_OOB_CODE")
        public static let expiredOobCode = Self(rawValue: "EXPIRED_OOB_CODE")
        public static let missingReqType = Self(rawValue: "MISSING_REQ_TYPE")
        public static let missingContinueURI = Self(rawValue: "MISSING_CONTINUE_URI")
        public static let invalidContinueURI = Self(rawValue: "INVALID_CONTINUE_URI")
        public static let missingIDToken = Self(rawValue: "MISSING_ID_TOKEN")
        public static let duplicateRawID = Self(rawValue: "DUPLICATE_RAW_ID")
        // Apple's side (`/appleid/auth/…`), in OAuth 2's words.
        public static let oauthInvalidRequest = Self(rawValue: "invalid_request")
        public static let oauthServerError = Self(rawValue: "server_error")
        /// A field of the REST API this backend does not implement (tenants, email links, passwords).
        public static let unsupportedField = Self(rawValue: "UNSUPPORTED_FIELD")
        // The request itself.
        public static let permissionDenied = Self(rawValue: "PERMISSION_DENIED")
        public static let apiKeyInvalid = Self(rawValue: "API_KEY_INVALID")
        /// The key is restricted to iOS apps and the request's bundle ID is not one of them.
        public static let apiKeyIOSAppBlocked = Self(rawValue: "API_KEY_IOS_APP_BLOCKED")
        public static let invalidJSON = Self(rawValue: "INVALID_JSON")
        public static let invalidRequest = Self(rawValue: "INVALID_REQUEST")
        public static let notFound = Self(rawValue: "NOT_FOUND")
        public static let methodNotAllowed = Self(rawValue: "METHOD_NOT_ALLOWED")
        public static let payloadTooLarge = Self(rawValue: "PAYLOAD_TOO_LARGE")
        public static let notImplemented = Self(rawValue: "NOT_IMPLEMENTED")
        public static let `internal` = Self(rawValue: "INTERNAL")
        // This toolkit's own: the backend's configuration and state.
        /// A configuration the backend refuses (test numbers, reCAPTCHA outcome, …).
        public static let invalidConfig = Self(rawValue: "INVALID_CONFIG")
        /// The state folder cannot be written.
        public static let stateUnavailable = Self(rawValue: "STATE_UNAVAILABLE")
        /// The front end's 503 (``IdentityToolkitError/unavailable()``): not on the wire as a code.
        public static let unavailable = Self(rawValue: "UNAVAILABLE")
        /// The state folder holds something the backend cannot read.
        public static let stateCorrupt = Self(rawValue: "STATE_CORRUPT")
    }
}

/// Google's error envelope: `{"error":{"code":400,"message":"INVALID_CODE","errors":[{"message":"INVALID_CODE","reason":"invalid","domain":"global"}]}}`.
public struct ErrorResponse: Codable, Sendable, Hashable {
    public struct Body: Codable, Sendable, Hashable {
        public var code: Int
        public var message: String
        public var errors: [Item]?
        /// `INVALID_ARGUMENT`, … (newer Google APIs add it).
        public var status: String?
        /// `google.rpc.ErrorInfo` and the like (the front end's API-key errors carry one).
        public var details: [Detail]?
        public init(code: Int, message: String, errors: [Item]? = nil, status: String? = nil, details: [Detail]? = nil) {
            self.code = code
            self.message = message
            self.errors = errors
            self.status = status
            self.details = details
        }
    }
    /// One of `error.details`: `{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": …}`.
    public struct Detail: Codable, Sendable, Hashable {
        public static let errorInfoType = "type.googleapis.com/google.rpc.ErrorInfo"
        public var type: String
        public var reason: String?
        public var domain: String?
        public var metadata: [String: String]?
        public init(type: String, reason: String?, domain: String?, metadata: [String: String]?) {
            self.type = type
            self.reason = reason
            self.domain = domain
            self.metadata = metadata
        }
        enum CodingKeys: String, CodingKey {
            case type = "@type", reason, domain, metadata
        }
    }
    public struct Item: Codable, Sendable, Hashable {
        public var message: String?
        /// `invalid`, `forbidden`, `notFound`; `keyInvalid…` and `ipRefererBlocked` for API-key problems.
        public var reason: String?
        public var domain: String?
        public init(message: String?, reason: String?, domain: String?) {
            self.message = message
            self.reason = reason
            self.domain = domain
        }
    }
    public var error: Body
    public init(error: Body) { self.error = error }
}
