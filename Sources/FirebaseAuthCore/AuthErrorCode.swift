import Foundation
import IdentityToolkitAPI
import Utilities

/// FirebaseAuth's error codes, all of them, with the SDK's names and numbers (FirebaseAuth 12.19
/// `Utilities/AuthErrors.swift`); errors bridge to `NSError` in the domain `FIRAuthErrorDomain`
/// with these as their `code`.
///
/// As in 12.19 it is an `Error` whose ``code`` is itself (firebase-ios-sdk#13430), so that
/// `if let e = error as? AuthErrorCode, e.code == .networkError` compiles as it did in 10.x. It
/// does not match the errors the SDK's calls return, on a device or here: those are `NSError`s in
/// `FIRAuthErrorDomain`, while the errors of an `@objc` Swift enum bridge in the domain
/// `FirebaseAuth.AuthErrorCode`, so the cast gives nil and `catch let e as AuthErrorCode` never
/// catches. Read a call's code with `AuthErrorCode(rawValue: (error as NSError).code)`
/// (docs/app-code-on-linux.md, "Errors").
public enum AuthErrorCode: Int, Error, Sendable, Hashable, CaseIterable {
    case invalidCustomToken = 17000
    case customTokenMismatch = 17002
    case invalidCredential = 17004
    case userDisabled = 17005
    case operationNotAllowed = 17006
    case emailAlreadyInUse = 17007
    case invalidEmail = 17008
    case wrongPassword = 17009
    case tooManyRequests = 17010
    case userNotFound = 17011
    case accountExistsWithDifferentCredential = 17012
    case requiresRecentLogin = 17014
    case providerAlreadyLinked = 17015
    case noSuchProvider = 17016
    case invalidUserToken = 17017
    case networkError = 17020
    case userTokenExpired = 17021
    case invalidAPIKey = 17023
    case userMismatch = 17024
    case credentialAlreadyInUse = 17025
    case weakPassword = 17026
    case appNotAuthorized = 17028
    case expiredActionCode = 17029
    case invalidActionCode = 17030
    case invalidMessagePayload = 17031
    case invalidSender = 17032
    case invalidRecipientEmail = 17033
    case missingEmail = 17034
    case missingIosBundleID = 17036
    case missingAndroidPackageName = 17037
    case unauthorizedDomain = 17038
    case invalidContinueURI = 17039
    case missingContinueURI = 17040
    case missingPhoneNumber = 17041
    case invalidPhoneNumber = 17042
    case missingVerificationCode = 17043
    case invalidVerificationCode = 17044
    case missingVerificationID = 17045
    case invalidVerificationID = 17046
    case missingAppCredential = 17047
    case invalidAppCredential = 17048
    case sessionExpired = 17051
    case quotaExceeded = 17052
    case missingAppToken = 17053
    case notificationNotForwarded = 17054
    case appNotVerified = 17055
    case captchaCheckFailed = 17056
    case webContextAlreadyPresented = 17057
    case webContextCancelled = 17058
    case appVerificationUserInteractionFailure = 17059
    case invalidClientID = 17060
    case webNetworkRequestFailed = 17061
    case webInternalError = 17062
    case webSignInUserInteractionFailure = 17063
    case localPlayerNotAuthenticated = 17066
    case nullUser = 17067
    case invalidProviderID = 17071
    case tenantIDMismatch = 17072
    case unsupportedTenantOperation = 17073
    case invalidHostingLinkDomain = 17214
    case rejectedCredential = 17075
    case gameKitNotLinked = 17076
    case secondFactorRequired = 17078
    case missingMultiFactorSession = 17081
    case missingMultiFactorInfo = 17082
    case invalidMultiFactorSession = 17083
    case multiFactorInfoNotFound = 17084
    case adminRestrictedOperation = 17085
    case unverifiedEmail = 17086
    case secondFactorAlreadyEnrolled = 17087
    case maximumSecondFactorCountExceeded = 17088
    case unsupportedFirstFactor = 17089
    case emailChangeNeedsVerification = 17090
    case missingClientIdentifier = 17093
    case missingOrInvalidNonce = 17094
    case blockingCloudFunctionError = 17105
    case recaptchaNotEnabled = 17200
    case missingRecaptchaToken = 17201
    case invalidRecaptchaToken = 17202
    case invalidRecaptchaAction = 17203
    case missingClientType = 17204
    case missingRecaptchaVersion = 17205
    case invalidRecaptchaVersion = 17206
    case invalidReqType = 17207
    case recaptchaSDKNotLinked = 17208
    case recaptchaSiteKeyMissing = 17209
    case recaptchaActionCreationFailed = 17210
    case passwordDoesNotMeetRequirements = 17211
    case keychainError = 17995
    /// Not an SDK code: where the SDK calls `fatalError` (an unregistered URL scheme, a malformed
    /// backend answer), this toolkit throws this instead, with a message saying what to fix.
    case appConfigurationError = 17998
    case internalError = 17999
    case malformedJWT = 18000

    /// The SDK's name for the code, as `NSError.userInfo[AuthErrorUserInfoNameKey]` carries it
    /// (`ERROR_INVALID_PHONE_NUMBER`; the SDK writes two without the prefix).
    package var errorCodeString: String {
        switch self {
        case .invalidCustomToken: "ERROR_INVALID_CUSTOM_TOKEN"
        case .customTokenMismatch: "ERROR_CUSTOM_TOKEN_MISMATCH"
        case .invalidCredential: "ERROR_INVALID_CREDENTIAL"
        case .userDisabled: "ERROR_USER_DISABLED"
        case .operationNotAllowed: "ERROR_OPERATION_NOT_ALLOWED"
        case .emailAlreadyInUse: "ERROR_EMAIL_ALREADY_IN_USE"
        case .invalidEmail: "ERROR_INVALID_EMAIL"
        case .wrongPassword: "ERROR_WRONG_PASSWORD"
        case .tooManyRequests: "ERROR_TOO_MANY_REQUESTS"
        case .userNotFound: "ERROR_USER_NOT_FOUND"
        case .accountExistsWithDifferentCredential: "ERROR_ACCOUNT_EXISTS_WITH_DIFFERENT_CREDENTIAL"
        case .requiresRecentLogin: "ERROR_REQUIRES_RECENT_LOGIN"
        case .providerAlreadyLinked: "ERROR_PROVIDER_ALREADY_LINKED"
        case .noSuchProvider: "ERROR_NO_SUCH_PROVIDER"
        case .invalidUserToken: "ERROR_INVALID_USER_TOKEN"
        case .networkError: "ERROR_NETWORK_REQUEST_FAILED"
        case .userTokenExpired: "ERROR_USER_TOKEN_EXPIRED"
        case .invalidAPIKey: "ERROR_INVALID_API_KEY"
        case .userMismatch: "ERROR_USER_MISMATCH"
        case .credentialAlreadyInUse: "ERROR_CREDENTIAL_ALREADY_IN_USE"
        case .weakPassword: "ERROR_WEAK_PASSWORD"
        case .appNotAuthorized: "ERROR_APP_NOT_AUTHORIZED"
        case .expiredActionCode: "ERROR_EXPIRED_ACTION_CODE"
        case .invalidActionCode: "ERROR_INVALID_ACTION_CODE"
        case .invalidMessagePayload: "ERROR_INVALID_MESSAGE_PAYLOAD"
        case .invalidSender: "ERROR_INVALID_SENDER"
        case .invalidRecipientEmail: "ERROR_INVALID_RECIPIENT_EMAIL"
        case .missingEmail: "ERROR_MISSING_EMAIL"
        case .missingIosBundleID: "ERROR_MISSING_IOS_BUNDLE_ID"
        case .missingAndroidPackageName: "ERROR_MISSING_ANDROID_PKG_NAME"
        case .unauthorizedDomain: "ERROR_UNAUTHORIZED_DOMAIN"
        case .invalidContinueURI: "ERROR_INVALID_CONTINUE_URI"
        case .missingContinueURI: "ERROR_MISSING_CONTINUE_URI"
        case .missingPhoneNumber: "ERROR_MISSING_PHONE_NUMBER"
        case .invalidPhoneNumber: "ERROR_INVALID_PHONE_NUMBER"
        case .missingVerificationCode: "ERROR_MISSING_VERIFICATION_CODE"
        case .invalidVerificationCode: "ERROR_INVALID_VERIFICATION_CODE"
        case .missingVerificationID: "ERROR_MISSING_VERIFICATION_ID"
        case .invalidVerificationID: "ERROR_INVALID_VERIFICATION_ID"
        case .missingAppCredential: "MISSING_APP_CREDENTIAL"
        case .invalidAppCredential: "INVALID_APP_CREDENTIAL"
        case .sessionExpired: "ERROR_SESSION_EXPIRED"
        case .quotaExceeded: "ERROR_QUOTA_EXCEEDED"
        case .missingAppToken: "ERROR_MISSING_APP_TOKEN"
        case .notificationNotForwarded: "ERROR_NOTIFICATION_NOT_FORWARDED"
        case .appNotVerified: "ERROR_APP_NOT_VERIFIED"
        case .captchaCheckFailed: "ERROR_CAPTCHA_CHECK_FAILED"
        case .webContextAlreadyPresented: "ERROR_WEB_CONTEXT_ALREADY_PRESENTED"
        case .webContextCancelled: "ERROR_WEB_CONTEXT_CANCELLED"
        case .appVerificationUserInteractionFailure: "ERROR_APP_VERIFICATION_FAILED"
        case .invalidClientID: "ERROR_INVALID_CLIENT_ID"
        case .webNetworkRequestFailed: "ERROR_WEB_NETWORK_REQUEST_FAILED"
        case .webInternalError: "ERROR_WEB_INTERNAL_ERROR"
        case .webSignInUserInteractionFailure: "ERROR_WEB_USER_INTERACTION_FAILURE"
        case .localPlayerNotAuthenticated: "ERROR_LOCAL_PLAYER_NOT_AUTHENTICATED"
        case .nullUser: "ERROR_NULL_USER"
        case .invalidProviderID: "ERROR_INVALID_PROVIDER_ID"
        case .tenantIDMismatch: "ERROR_TENANT_ID_MISMATCH"
        case .unsupportedTenantOperation: "ERROR_UNSUPPORTED_TENANT_OPERATION"
        case .invalidHostingLinkDomain: "ERROR_INVALID_HOSTING_LINK_DOMAIN"
        case .rejectedCredential: "ERROR_REJECTED_CREDENTIAL"
        case .gameKitNotLinked: "ERROR_GAME_KIT_NOT_LINKED"
        case .secondFactorRequired: "ERROR_SECOND_FACTOR_REQUIRED"
        case .missingMultiFactorSession: "ERROR_MISSING_MULTI_FACTOR_SESSION"
        case .missingMultiFactorInfo: "ERROR_MISSING_MULTI_FACTOR_INFO"
        case .invalidMultiFactorSession: "ERROR_INVALID_MULTI_FACTOR_SESSION"
        case .multiFactorInfoNotFound: "ERROR_MULTI_FACTOR_INFO_NOT_FOUND"
        case .adminRestrictedOperation: "ERROR_ADMIN_RESTRICTED_OPERATION"
        case .unverifiedEmail: "ERROR_UNVERIFIED_EMAIL"
        case .secondFactorAlreadyEnrolled: "ERROR_SECOND_FACTOR_ALREADY_ENROLLED"
        case .maximumSecondFactorCountExceeded: "ERROR_MAXIMUM_SECOND_FACTOR_COUNT_EXCEEDED"
        case .unsupportedFirstFactor: "ERROR_UNSUPPORTED_FIRST_FACTOR"
        case .emailChangeNeedsVerification: "ERROR_EMAIL_CHANGE_NEEDS_VERIFICATION"
        case .missingClientIdentifier: "ERROR_MISSING_CLIENT_IDENTIFIER"
        case .missingOrInvalidNonce: "ERROR_MISSING_OR_INVALID_NONCE"
        case .blockingCloudFunctionError: "ERROR_BLOCKING_CLOUD_FUNCTION_RETURNED_ERROR"
        case .recaptchaNotEnabled: "ERROR_RECAPTCHA_NOT_ENABLED"
        case .missingRecaptchaToken: "ERROR_MISSING_RECAPTCHA_TOKEN"
        case .invalidRecaptchaToken: "ERROR_INVALID_RECAPTCHA_TOKEN"
        case .invalidRecaptchaAction: "ERROR_INVALID_RECAPTCHA_ACTION"
        case .missingClientType: "ERROR_MISSING_CLIENT_TYPE"
        case .missingRecaptchaVersion: "ERROR_MISSING_RECAPTCHA_VERSION"
        case .invalidRecaptchaVersion: "ERROR_INVALID_RECAPTCHA_VERSION"
        case .invalidReqType: "ERROR_INVALID_REQ_TYPE"
        case .recaptchaSDKNotLinked: "ERROR_RECAPTCHA_SDK_NOT_LINKED"
        case .recaptchaSiteKeyMissing: "ERROR_RECAPTCHA_SITE_KEY_MISSING"
        case .recaptchaActionCreationFailed: "ERROR_RECAPTCHA_ACTION_CREATION_FAILED"
        case .passwordDoesNotMeetRequirements: "ERROR_PASSWORD_DOES_NOT_MEET_REQUIREMENTS"
        case .keychainError: "ERROR_KEYCHAIN_ERROR"
        case .internalError: "ERROR_INTERNAL_ERROR"
        case .malformedJWT: "ERROR_MALFORMED_JWT"
        case .appConfigurationError: "ERROR_APP_CONFIGURATION"
        }
    }

    /// The SDK's message for the code: `localizedDescription` when the server gave no detail.
    package var errorDescription: String {
        switch self {
        case .invalidCustomToken:
            "The custom token format is incorrect. Please check the documentation."
        case .customTokenMismatch:
            "The custom token corresponds to a different audience."
        case .invalidCredential:
            "The supplied auth credential is malformed or has expired."
        case .userDisabled:
            "The user account has been disabled by an administrator."
        case .operationNotAllowed:
            "The given sign-in provider is disabled for this Firebase project. Enable it in the Firebase console, under the sign-in method tab of the Auth section."
        case .emailAlreadyInUse:
            "The email address is already in use by another account."
        case .invalidEmail:
            "The email address is badly formatted."
        case .wrongPassword:
            "The password is invalid or the user does not have a password."
        case .tooManyRequests:
            "We have blocked all requests from this device due to unusual activity. Try again later."
        case .userNotFound:
            "There is no user record corresponding to this identifier. The user may have been deleted."
        case .accountExistsWithDifferentCredential:
            "An account already exists with the same email address but different sign-in credentials. Sign in using a provider associated with this email address."
        case .requiresRecentLogin:
            "This operation is sensitive and requires recent authentication. Log in again before retrying this request."
        case .providerAlreadyLinked:
            "[ERROR_PROVIDER_ALREADY_LINKED] - User can only be linked to one identity for the given provider."
        case .noSuchProvider:
            "User was not linked to an account with the given provider."
        case .invalidUserToken:
            "This user's credential isn't valid for this project. This can happen if the user's token has been tampered with, or if the user doesn’t belong to the project associated with the API key used in your request."
        case .networkError:
            "Network error (such as timeout, interrupted connection or unreachable host) has occurred."
        case .userTokenExpired:
            "The user's credential is no longer valid. The user must sign in again."
        case .invalidAPIKey:
            "An invalid API Key was supplied in the request."
        case .userMismatch:
            "The supplied credentials do not correspond to the previously signed in user."
        case .credentialAlreadyInUse:
            "This credential is already associated with a different user account."
        case .weakPassword:
            "The password must be 6 characters long or more."
        case .appNotAuthorized:
            "This app is not authorized to use Firebase Authentication with the provided API key. Review your key configuration in the Google API console and ensure that it accepts requests from your app's bundle ID."
        case .expiredActionCode:
            "The action code has expired."
        case .invalidActionCode:
            "The action code is invalid. This can happen if the code is malformed, expired, or has already been used."
        case .invalidMessagePayload:
            "The action code is invalid. This can happen if the code is malformed, expired, or has already been used."
        case .invalidSender:
            "The email template corresponding to this action contains invalid characters in its message. Please fix by going to the Auth email templates section in the Firebase Console."
        case .invalidRecipientEmail:
            "The action code is invalid. This can happen if the code is malformed, expired, or has already been used."
        case .missingEmail:
            "An email address must be provided."
        case .missingIosBundleID:
            "An iOS Bundle ID must be provided if an App Store ID is provided."
        case .missingAndroidPackageName:
            "An Android Package Name must be provided if the Android App is required to be installed."
        case .unauthorizedDomain:
            "The domain of the continue URL is not allowlisted. Please allowlist the domain in the Firebase console."
        case .invalidContinueURI:
            "The continue URL provided in the request is invalid."
        case .missingContinueURI:
            "A continue URL must be provided in the request."
        case .missingPhoneNumber:
            "To send verification codes, provide a phone number for the recipient."
        case .invalidPhoneNumber:
            "The format of the phone number provided is incorrect. Please enter the phone number in a format that can be parsed into E.164 format. E.164 phone numbers are written in the format [+][country code][subscriber number including area code]."
        case .missingVerificationCode:
            "The phone auth credential was created with an empty SMS verification Code."
        case .invalidVerificationCode:
            "The multifactor verification code used to create the auth credential is invalid. Re-collect the verification code and be sure to use the verification code provided by the user."
        case .missingVerificationID:
            "The phone auth credential was created with an empty verification ID."
        case .invalidVerificationID:
            "The verification ID used to create the phone auth credential is invalid."
        case .missingAppCredential:
            "The phone verification request is missing an APNs Device token. Firebase Auth automatically detects APNs Device Tokens, however, if method swizzling is disabled, the APNs token must be set via the APNSToken property on FIRAuth or by calling setAPNSToken:type on FIRAuth."
        case .invalidAppCredential:
            "The APNs device token provided is either incorrect or does not match the private certificate uploaded to the Firebase Console."
        case .sessionExpired:
            "The SMS code has expired. Please re-send the verification code to try again."
        case .quotaExceeded:
            "The quota for this operation has been exceeded."
        case .missingAppToken:
            "There seems to be a problem with your project's Firebase phone number authentication set-up, please make sure to follow the instructions found at https://firebase.google.com/docs/auth/ios/phone-auth"
        case .notificationNotForwarded:
            "If app delegate swizzling is disabled, remote notifications received by UIApplicationDelegate need tobe forwarded to FirebaseAuth's canHandleNotification method."
        case .appNotVerified:
            "Firebase could not retrieve the silent push notification and therefore could not verify your app. Ensure that you configured your app correctly to receive push notifications."
        case .captchaCheckFailed:
            "The reCAPTCHA response token provided is either invalid, expired or already"
        case .webContextAlreadyPresented:
            "User interaction is still ongoing, another view cannot be presented."
        case .webContextCancelled:
            "The interaction was cancelled by the user."
        case .appVerificationUserInteractionFailure:
            "The app verification process has failed, print and inspect the error details for more information"
        case .invalidClientID:
            "The OAuth client ID provided is either invalid or does not match the specified API key."
        case .webNetworkRequestFailed:
            "A network error (such as timeout, interrupted connection, or unreachable host) has occurred within the web context."
        case .webInternalError:
            "An internal error has occurred within the SFSafariViewController or WKWebView."
        case .webSignInUserInteractionFailure:
            "The app verification process has failed, print and inspect the error details for more information"
        case .localPlayerNotAuthenticated:
            "The local player is not authenticated. Please log the local player in to Game Center."
        case .nullUser:
            "A null user object was provided as the argument for an operation which requires a non-null user object."
        case .invalidProviderID:
            "The provider ID provided for the attempted web operation is invalid."
        case .tenantIDMismatch:
            "The provided user's tenant ID does not match the Auth instance's tenant ID."
        case .unsupportedTenantOperation:
            "This operation is not supported in a multi-tenant context."
        case .invalidHostingLinkDomain:
            "The provided hosting link domain is not configured in Firebase Hosting or is not owned by the current project."
        case .rejectedCredential:
            "The request contains malformed or mismatching credentials."
        case .gameKitNotLinked:
            "The GameKit framework is not linked. Please turn on the Game Center capability."
        case .secondFactorRequired:
            "Please complete a second factor challenge to finish signing into this account."
        case .missingMultiFactorSession:
            "The request is missing proof of first factor successful sign-in."
        case .missingMultiFactorInfo:
            "No second factor identifier is provided."
        case .invalidMultiFactorSession:
            "The request does not contain a valid proof of first factor successful sign-in."
        case .multiFactorInfoNotFound:
            "The user does not have a second factor matching the identifier provided."
        case .adminRestrictedOperation:
            "This operation is restricted to administrators only."
        case .unverifiedEmail:
            "The operation requires a verified email."
        case .secondFactorAlreadyEnrolled:
            "The second factor is already enrolled on this account."
        case .maximumSecondFactorCountExceeded:
            "The maximum allowed number of second factors on a user has been exceeded."
        case .unsupportedFirstFactor:
            "Enrolling a second factor or signing in with a multi-factor account requires sign-in with a supported first factor."
        case .emailChangeNeedsVerification:
            "Multi-factor users must always have a verified email."
        case .missingClientIdentifier:
            "The request does not contain a client identifier."
        case .missingOrInvalidNonce:
            "The request contains malformed or mismatched credentials."
        case .blockingCloudFunctionError:
            "Blocking cloud function returned an error."
        case .recaptchaNotEnabled:
            "reCAPTCHA Enterprise is not enabled for this project."
        case .missingRecaptchaToken:
            "The backend request is missing the reCAPTCHA verification token."
        case .invalidRecaptchaToken:
            "The reCAPTCHA verification token is invalid or has expired."
        case .invalidRecaptchaAction:
            "The reCAPTCHA verification failed due to an invalid action."
        case .missingClientType:
            "The request is missing a client type or the client type is invalid."
        case .missingRecaptchaVersion:
            "The request is missing the reCAPTCHA version parameter."
        case .invalidRecaptchaVersion:
            "The request specifies an invalid version of reCAPTCHA."
        case .invalidReqType:
            "The request is not supported or is invalid."
        case .recaptchaSDKNotLinked:
            "The reCAPTCHA SDK is not linked to your app. See https://cloud.google.com/recaptcha-enterprise/docs/instrument-ios-apps"
        case .recaptchaSiteKeyMissing:
            "The reCAPTCHA SDK site key wasn't found. See https://cloud.google.com/recaptcha-enterprise/docs/instrument-ios-apps"
        case .recaptchaActionCreationFailed:
            "The reCAPTCHA SDK action class failed to initialize. See https://cloud.google.com/recaptcha-enterprise/docs/instrument-ios-apps"
        case .passwordDoesNotMeetRequirements:
            "Missing password requirements."
        case .keychainError:
            "An error occurred when accessing the keychain. The NSLocalizedFailureReasonErrorKey field in the NSError.userInfo dictionary will contain more information about the error encountered"
        case .internalError:
            "An internal error has occurred, print and inspect the error details for more information."
        case .malformedJWT:
            "Failed to parse JWT. Check the userInfo dictionary for the full token."
        case .appConfigurationError:
            "The app is set up in a way the SDK stops on (fatalError): see the failure reason."
        }
    }
    /// The code itself: 12.19 has it for code written against 10.x, whose `AuthErrorCode` was a
    /// struct with a `code` (FirebaseAuth 12.19 `Utilities/AuthErrors.swift`).
    public var code: Self { self }
}

/// The SDK's names for its error domain and `userInfo` keys (`AuthErrors` in FirebaseAuth 12.19).
open class AuthErrors: NSObject {
    public static let domain = "FIRAuthErrorDomain"
    public static let userInfoNameKey = "FIRAuthErrorUserInfoNameKey"
    public static let userInfoEmailKey = "FIRAuthErrorUserInfoEmailKey"
    public static let userInfoUpdatedCredentialKey = "FIRAuthErrorUserInfoUpdatedCredentialKey"
    public static let userInfoMultiFactorResolverKey = "FIRAuthErrorUserInfoMultiFactorResolverKey"
}

/// The keys under the names the guides use (the SDK's `NS_SWIFT_NAME`s of its Objective-C constants).
public let AuthErrorDomain = AuthErrors.domain
public let AuthErrorUserInfoNameKey = AuthErrors.userInfoNameKey
public let AuthErrorUserInfoEmailKey = AuthErrors.userInfoEmailKey
public let AuthErrorUserInfoUpdatedCredentialKey = AuthErrors.userInfoUpdatedCredentialKey
public let AuthErrorUserInfoMultiFactorResolverKey = AuthErrors.userInfoMultiFactorResolverKey

/// An error from the auth core: the SDK's code, and what happened.
///
/// It bridges to `NSError` as the SDK's errors do (`error as NSError`): domain `FIRAuthErrorDomain`,
/// `code` the ``AuthErrorCode`` raw value, `localizedDescription` the SDK's message (the server's
/// detail when it gave one), and `userInfo` with `AuthErrorUserInfoNameKey` (`ERROR_…`) and, when
/// they apply, `AuthErrorUserInfoMultiFactorResolverKey`, `AuthErrorUserInfoUpdatedCredentialKey`,
/// `AuthErrorUserInfoEmailKey` and `NSUnderlyingErrorKey`. What authsim knows beyond the SDK's
/// words (``message``) is under `NSLocalizedFailureReasonErrorKey`.
package struct AuthError: CodedError, CustomNSError, LocalizedError {
    /// The fields, behind one reference: an `AuthError` is a word, so the async functions that
    /// `throw(AuthError)` keep a word per call site in their frames, not the whole error. Every
    /// sign-in in flight holds those frames (10,000 at once held about 70 MB of them).
    /// `@unchecked Sendable`: every field is a constant; the resolver (not Sendable, as in 12.19)
    /// goes to the app with the error, as the SDK's `userInfo` carries it.
    private final class Storage: @unchecked Sendable {
        let code: AuthErrorCode
        let message: String
        let serverMessage: String?
        let updatedCredential: AuthCredential?
        let email: String?
        let resolver: MultiFactorResolver?
        let underlyingError: NSError?
        let passedOn: NSError?

        init(code: AuthErrorCode, message: String, serverMessage: String?, updatedCredential: AuthCredential?, email: String?,
             resolver: MultiFactorResolver?, underlyingError: NSError?, passedOn: NSError?) {
            self.code = code
            self.message = message
            self.serverMessage = serverMessage
            self.updatedCredential = updatedCredential
            self.email = email
            self.resolver = resolver
            self.underlyingError = underlyingError
            self.passedOn = passedOn
        }
    }
    private let storage: Storage

    package var code: AuthErrorCode { storage.code }
    /// authsim's account of what happened, more than the SDK says (for timelines, logs, `explain`).
    package var message: String { storage.message }
    /// The backend's `CODE : detail` when the error came from it.
    package var serverMessage: String? { storage.serverMessage }
    /// `AuthErrorUserInfoUpdatedCredentialKey`: for `credentialAlreadyInUse` from linking an Apple
    /// credential (single-use), a fresh credential that signs in to the account that holds it.
    package var updatedCredential: AuthCredential? { storage.updatedCredential }
    /// `AuthErrorUserInfoEmailKey`.
    package var email: String? { storage.email }
    /// `AuthErrorUserInfoMultiFactorResolverKey`: for `secondFactorRequired`, what finishes the sign-in.
    package var resolver: MultiFactorResolver? { storage.resolver }
    /// `NSUnderlyingErrorKey`.
    package var underlyingError: NSError? { storage.underlyingError }
    /// Another library's error that the SDK hands the app as it came, not as one of its own (the
    /// RecaptchaEnterprise SDK's `fetchClient` failure): the public call throws this instead.
    package var passedOn: NSError? { storage.passedOn }

    package init(_ code: AuthErrorCode, _ message: String, serverMessage: String? = nil, updatedCredential: AuthCredential? = nil,
                email: String? = nil, resolver: MultiFactorResolver? = nil, underlyingError: NSError? = nil) {
        storage = Storage(code: code, message: message, serverMessage: serverMessage, updatedCredential: updatedCredential, email: email,
                          resolver: resolver, underlyingError: underlyingError, passedOn: nil)
    }

    /// `error`, thrown to the app as it is (``passedOn``); inside the auth core, an error with
    /// `code` and `message` for timelines and logs.
    package init(passingOn error: NSError, as code: AuthErrorCode, _ message: String) {
        storage = Storage(code: code, message: message, serverMessage: nil, updatedCredential: nil, email: nil, resolver: nil,
                          underlyingError: error, passedOn: error)
    }

    /// What a public call throws for `error`: the error another library gave, if the SDK passes
    /// it on as it came; otherwise, for an `AuthError`, an `NSError` (``AuthNSError``), as the
    /// SDK's errors are. On Linux a Swift error is no `NSError` to a cast: `catch let e as NSError`
    /// and `error as? NSError`, which always match on a device, would not match it.
    package static func toApp(_ error: any Error) -> any Error {
        guard let error = error as? AuthError else { return error }
        return error.passedOn ?? AuthNSError(error)
    }

    /// Runs a public call: what it throws reaches the app as ``toApp(_:)`` makes it.
    package static func forApp<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch { throw toApp(error) }
    }

    /// ``forApp(_:)-…`` for a call that does not wait.
    package static func forApp<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw toApp(error) }
    }

    /// The `AuthError` behind an error a public call threw, for authsim's own code (scenarios,
    /// timelines, tests); nil for another library's error.
    package init?(thrown error: any Error) {
        if let error = error as? AuthNSError {
            self = error.authError
        } else if let error = error as? AuthError {
            self = error
        } else {
            return nil
        }
    }

    package static var errorDomain: String { AuthErrors.domain }
    package var errorCode: Int { code.rawValue }

    /// What the SDK puts in `localizedDescription`: the server's detail after `CODE : `, or the
    /// code's own message (FirebaseAuth 12.19 `AuthErrorUtils.error(code:message:)`).
    package var errorDescription: String? {
        if let serverMessage { return Self.sdkDescription(code, serverMessage: serverMessage) }
        return code.errorDescription
    }

    package var errorUserInfo: [String: Any] {
        var info: [String: Any] = [
            NSLocalizedDescriptionKey: errorDescription ?? code.errorDescription,
            AuthErrors.userInfoNameKey: code.errorCodeString,
        ]
        if message != info[NSLocalizedDescriptionKey] as? String { info[NSLocalizedFailureReasonErrorKey] = message }
        if let resolver { info[AuthErrors.userInfoMultiFactorResolverKey] = resolver }
        if let updatedCredential { info[AuthErrors.userInfoUpdatedCredentialKey] = updatedCredential }
        if let email { info[AuthErrors.userInfoEmailKey] = email }
        if let underlyingError { info[NSUnderlyingErrorKey] = underlyingError }
        return info
    }
}

/// The error a public call throws: an `NSError` in `FIRAuthErrorDomain` whose code, description
/// and `userInfo` are the ``AuthError``'s (`AuthErrorUtils.error(code:…)` makes the SDK's so), and
/// which keeps the ``AuthError`` for authsim's own code.
package final class AuthNSError: NSError, @unchecked Sendable {
    package let authError: AuthError

    init(_ error: AuthError) {
        authError = error
        super.init(domain: AuthError.errorDomain, code: error.errorCode, userInfo: error.errorUserInfo)
    }

    required init?(coder: NSCoder) { nil }
}

extension AuthError {
    /// The `AuthError` an auth-core call threw, typed, for authsim's own code and tests: the calls
    /// throw untyped errors as the SDK's do, and every error they throw is an `AuthError`.
    package static func catching<T>(_ body: () async throws -> T) async throws(AuthError) -> T {
        do { return try await body() } catch {
            throw AuthError(thrown: error) ?? AuthError(.internalError, "not an AuthError: \(error)")
        }
    }
}
