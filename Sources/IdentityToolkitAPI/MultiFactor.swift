import Foundation

// Phone multi-factor (Identity Platform v2). Fields and wire names as the SDK's
// `Backend/RPC/MultiFactor/*` and `Backend/RPC/Proto/Phone/*` (FirebaseAuth 12.19).

/// One enrolled second factor, as `mfaInfo` lists them (`AuthProtoMFAEnrollment`).
public struct MFAEnrollment: Codable, Sendable, Hashable {
    public var mfaEnrollmentId: String?
    public var displayName: String?
    /// The phone number, masked in sign-in hints (`+*******1234`).
    public var phoneInfo: String?
    /// RFC 3339.
    public var enrolledAt: String?
    /// The whole number where `phoneInfo` is masked (the Auth Emulator's exports carry it).
    public var unobfuscatedPhoneInfo: String?
    public init(mfaEnrollmentId: String?, displayName: String? = nil, phoneInfo: String? = nil, enrolledAt: String? = nil,
                unobfuscatedPhoneInfo: String? = nil) {
        self.unobfuscatedPhoneInfo = unobfuscatedPhoneInfo
        self.mfaEnrollmentId = mfaEnrollmentId
        self.displayName = displayName
        self.phoneInfo = phoneInfo
        self.enrolledAt = enrolledAt
    }
}

/// `AuthProtoStartMFAPhoneRequestInfo`: the number to text, and the same app verification as
/// `sendVerificationCode` (an app credential or a reCAPTCHA token).
public struct StartMFAPhoneRequestInfo: Codable, Sendable, Hashable {
    public var phoneNumber: String?
    public var iosReceipt: String?
    public var iosSecret: String?
    public var recaptchaToken: String?
    public var captchaResponse: String?
    public var recaptchaVersion: RecaptchaVersion?
    public var clientType: String?
    public init(phoneNumber: String?, iosReceipt: String? = nil, iosSecret: String? = nil, recaptchaToken: String? = nil,
                captchaResponse: String? = nil, recaptchaVersion: RecaptchaVersion? = nil, clientType: String? = nil) {
        self.phoneNumber = phoneNumber
        self.iosReceipt = iosReceipt
        self.iosSecret = iosSecret
        self.recaptchaToken = recaptchaToken
        self.captchaResponse = captchaResponse
        self.recaptchaVersion = recaptchaVersion
        self.clientType = clientType
    }
}

/// `AuthProtoStartMFAPhoneResponseInfo`: the verification ID of the code sent.
public struct StartMFAPhoneResponseInfo: Codable, Sendable, Hashable {
    public var sessionInfo: String?
    public init(sessionInfo: String?) { self.sessionInfo = sessionInfo }
}

/// `AuthProtoFinalizeMFAPhoneRequestInfo`: the verification ID and the code the user typed.
public struct FinalizeMFAPhoneRequestInfo: Codable, Sendable, Hashable {
    public var sessionInfo: String?
    public var code: String?
    public init(sessionInfo: String?, code: String?) {
        self.sessionInfo = sessionInfo
        self.code = code
    }
}

/// `AuthProtoFinalizeMFAPhoneResponseInfo`.
public struct FinalizeMFAPhoneResponseInfo: Codable, Sendable, Hashable {
    public var phoneNumber: String?
    public init(phoneNumber: String?) { self.phoneNumber = phoneNumber }
}

/// `accounts/mfaEnrollment:start`: a signed-in user enrolls a phone as second factor.
public struct StartMFAEnrollmentRequest: AuthRPCRequest, Hashable {
    public typealias Response = StartMFAEnrollmentResponse
    public static let endpoint = IdentityToolkitEndpoint.startMFAEnrollment
    public var idToken: String?
    public var phoneEnrollmentInfo: StartMFAPhoneRequestInfo?
    public var tenantId: String?
    public init(idToken: String?, phoneEnrollmentInfo: StartMFAPhoneRequestInfo?, tenantId: String? = nil) {
        self.idToken = idToken
        self.phoneEnrollmentInfo = phoneEnrollmentInfo
        self.tenantId = tenantId
    }
}

public struct StartMFAEnrollmentResponse: Codable, Sendable, Hashable {
    public var phoneSessionInfo: StartMFAPhoneResponseInfo?
    public init(phoneSessionInfo: StartMFAPhoneResponseInfo?) { self.phoneSessionInfo = phoneSessionInfo }
}

/// `accounts/mfaEnrollment:finalize`.
public struct FinalizeMFAEnrollmentRequest: AuthRPCRequest, Hashable {
    public typealias Response = FinalizeMFAEnrollmentResponse
    public static let endpoint = IdentityToolkitEndpoint.finalizeMFAEnrollment
    public var idToken: String?
    public var displayName: String?
    public var phoneVerificationInfo: FinalizeMFAPhoneRequestInfo?
    public var tenantId: String?
    public init(idToken: String?, displayName: String?, phoneVerificationInfo: FinalizeMFAPhoneRequestInfo?, tenantId: String? = nil) {
        self.idToken = idToken
        self.displayName = displayName
        self.phoneVerificationInfo = phoneVerificationInfo
        self.tenantId = tenantId
    }
}

public struct FinalizeMFAEnrollmentResponse: Codable, Sendable, Hashable {
    public var idToken: String?
    public var refreshToken: String?
    /// `phoneAuthInfo`, as the service names it (v2 discovery document). FirebaseAuth 12.19 reads
    /// `phoneSessionInfo` here (FinalizeMFAEnrollmentResponse.swift 27), which the service never
    /// sends; the SDK does not use the value, so nothing the app sees depends on the name.
    public var phoneAuthInfo: FinalizeMFAPhoneResponseInfo?
    public init(idToken: String?, refreshToken: String?, phoneAuthInfo: FinalizeMFAPhoneResponseInfo? = nil) {
        self.idToken = idToken
        self.refreshToken = refreshToken
        self.phoneAuthInfo = phoneAuthInfo
    }
}

/// `accounts/mfaEnrollment:withdraw`.
public struct WithdrawMFARequest: AuthRPCRequest, Hashable {
    public typealias Response = WithdrawMFAResponse
    public static let endpoint = IdentityToolkitEndpoint.withdrawMFA
    public var idToken: String?
    public var mfaEnrollmentId: String?
    public var tenantId: String?
    public init(idToken: String?, mfaEnrollmentId: String?, tenantId: String? = nil) {
        self.idToken = idToken
        self.mfaEnrollmentId = mfaEnrollmentId
        self.tenantId = tenantId
    }
}

public struct WithdrawMFAResponse: Codable, Sendable, Hashable {
    public var idToken: String?
    public var refreshToken: String?
    public init(idToken: String?, refreshToken: String?) {
        self.idToken = idToken
        self.refreshToken = refreshToken
    }
}

/// `accounts/mfaSignIn:start`: after a first factor answered `mfaPendingCredential`, a code to the
/// enrolled phone.
public struct StartMFASignInRequest: AuthRPCRequest, Hashable {
    public typealias Response = StartMFASignInResponse
    public static let endpoint = IdentityToolkitEndpoint.startMFASignIn
    public var mfaPendingCredential: String?
    public var mfaEnrollmentId: String?
    public var phoneSignInInfo: StartMFAPhoneRequestInfo?
    public var tenantId: String?
    public init(mfaPendingCredential: String?, mfaEnrollmentId: String?, phoneSignInInfo: StartMFAPhoneRequestInfo?,
                tenantId: String? = nil) {
        self.mfaPendingCredential = mfaPendingCredential
        self.mfaEnrollmentId = mfaEnrollmentId
        self.phoneSignInInfo = phoneSignInInfo
        self.tenantId = tenantId
    }
}

public struct StartMFASignInResponse: Codable, Sendable, Hashable {
    public var phoneResponseInfo: StartMFAPhoneResponseInfo?
    public init(phoneResponseInfo: StartMFAPhoneResponseInfo?) { self.phoneResponseInfo = phoneResponseInfo }
}

/// `accounts/mfaSignIn:finalize`.
public struct FinalizeMFASignInRequest: AuthRPCRequest, Hashable {
    public typealias Response = FinalizeMFASignInResponse
    public static let endpoint = IdentityToolkitEndpoint.finalizeMFASignIn
    public var mfaPendingCredential: String?
    public var phoneVerificationInfo: FinalizeMFAPhoneRequestInfo?
    public var tenantId: String?
    public init(mfaPendingCredential: String?, phoneVerificationInfo: FinalizeMFAPhoneRequestInfo?, tenantId: String? = nil) {
        self.mfaPendingCredential = mfaPendingCredential
        self.phoneVerificationInfo = phoneVerificationInfo
        self.tenantId = tenantId
    }
}

public struct FinalizeMFASignInResponse: Codable, Sendable, Hashable {
    public var idToken: String?
    public var refreshToken: String?
    public init(idToken: String?, refreshToken: String?) {
        self.idToken = idToken
        self.refreshToken = refreshToken
    }
}
