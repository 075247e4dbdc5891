import IdentityToolkitAPI
import Utilities
import Foundation

/// FirebaseAuth's error codes, with the SDK's names and numbers (domain `FIRAuthErrorDomain`).
public enum AuthErrorCode: Int, Sendable, Hashable, CaseIterable {
    case invalidCredential = 17004
    case operationNotAllowed = 17006
    case userNotFound = 17011
    case providerAlreadyLinked = 17015
    case invalidUserToken = 17017
    case userMismatch = 17024
    case tooManyRequests = 17010
    case credentialAlreadyInUse = 17025
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
    case missingClientIdentifier = 17093
    case missingOrInvalidNonce = 17094
    /// Not an SDK code: where the SDK calls `fatalError` (an unregistered URL scheme, a malformed
    /// backend answer), this toolkit throws this instead, with a message saying what to fix.
    case appConfigurationError = 17998
    case internalError = 17999

    /// The server codes (`CODE : detail`) the SDK maps to its own (FirebaseAuth 12.19
    /// `Backend/AuthBackend.swift` `clientError(withServerErrorMessage:…)`); others are `internalError`.
    static let serverCodes: [IdentityToolkitError.Code: AuthErrorCode] = [
        .invalidPhoneNumber: .invalidPhoneNumber, .missingPhoneNumber: .missingPhoneNumber,
        .quotaExceeded: .quotaExceeded, .appNotVerified: .appNotVerified, .captchaCheckFailed: .captchaCheckFailed,
        .invalidAppCredential: .invalidAppCredential, .missingAppCredential: .missingAppCredential,
        .invalidCode: .invalidVerificationCode, .missingCode: .missingVerificationCode,
        .invalidSessionInfo: .invalidVerificationID, .missingSessionInfo: .missingVerificationID,
        .sessionExpired: .sessionExpired, .missingIOSAppToken: .missingAppToken,
        .tooManyAttemptsTryLater: .tooManyRequests, .missingOrInvalidNonce: .missingOrInvalidNonce,
        .missingClientIdentifier: .missingClientIdentifier, .operationNotAllowed: .operationNotAllowed,
        .invalidIDPResponse: .invalidCredential, .invalidPendingToken: .invalidCredential,
        .federatedUserIDAlreadyLinked: .credentialAlreadyInUse, .providerAlreadyLinked: .providerAlreadyLinked,
        .invalidIDToken: .invalidUserToken, .userNotFound: .userNotFound,
    ]
}

/// An error from the auth core: the SDK's code, and what happened. `serverMessage` is the backend's
/// `CODE : detail` when the error came from it.
public struct AuthError: CodedError {
    public let code: AuthErrorCode
    public let message: String
    public let serverMessage: String?
    /// `AuthErrorUserInfoUpdatedCredentialKey`: for `credentialAlreadyInUse` from linking an Apple
    /// credential (single-use), a fresh credential that signs in to the account that holds it.
    public let updatedCredential: OAuthCredential?
    /// `AuthErrorUserInfoEmailKey`.
    public let email: String?

    public init(_ code: AuthErrorCode, _ message: String, serverMessage: String? = nil, updatedCredential: OAuthCredential? = nil,
                email: String? = nil) {
        self.code = code
        self.message = message
        self.serverMessage = serverMessage
        self.updatedCredential = updatedCredential
        self.email = email
    }

    public static let errorDomain = "FIRAuthErrorDomain"
    public var errorCode: Int { code.rawValue }

    /// Maps a backend message (`CODE` or `CODE : detail`, split at the first colon) as the SDK does.
    static func fromServer(_ message: String) -> AuthError {
        let server = IdentityToolkitError(message: message, status: 400)
        return AuthError(AuthErrorCode.serverCodes[server.code] ?? .internalError, message, serverMessage: message)
    }
}
