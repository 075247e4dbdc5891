import Foundation

// Phone multi-factor (Identity Platform v2). Fields and wire names as the SDK's
// `Backend/RPC/MultiFactor/*` and `Backend/RPC/Proto/Phone/*` (FirebaseAuth 12.19).

/// One enrolled second factor, as `mfaInfo` lists them (`AuthProtoMFAEnrollment`).
package struct MFAEnrollment: Codable, Sendable, Hashable {
    package var mfaEnrollmentId: String?
    package var displayName: String?
    /// The phone number, masked in sign-in hints (`+*******1234`).
    package var phoneInfo: String?
    /// RFC 3339.
    package var enrolledAt: String?
    /// The whole number where `phoneInfo` is masked (the Auth Emulator's exports carry it).
    package var unobfuscatedPhoneInfo: String?
    /// Present (`{}`) for a TOTP second factor (the SDK reads only that it is there:
    /// AuthProtoMFAEnrollment.swift 28).
    package var totpInfo: TOTPInfo?
    package init(mfaEnrollmentId: String?, displayName: String? = nil, phoneInfo: String? = nil, enrolledAt: String? = nil,
                unobfuscatedPhoneInfo: String? = nil, totpInfo: TOTPInfo? = nil) {
        self.totpInfo = totpInfo
        self.unobfuscatedPhoneInfo = unobfuscatedPhoneInfo
        self.mfaEnrollmentId = mfaEnrollmentId
        self.displayName = displayName
        self.phoneInfo = phoneInfo
        self.enrolledAt = enrolledAt
    }
}

/// `AuthProtoStartMFAPhoneRequestInfo`: the number to text, and the same app verification as
/// `sendVerificationCode` (an app credential or a reCAPTCHA token).
package struct StartMFAPhoneRequestInfo: Codable, Sendable, Hashable {
    package var phoneNumber: String?
    package var iosReceipt: String?
    package var iosSecret: String?
    package var recaptchaToken: String?
    package var captchaResponse: String?
    package var recaptchaVersion: RecaptchaVersion?
    package var clientType: String?
    package init(phoneNumber: String?, iosReceipt: String? = nil, iosSecret: String? = nil, recaptchaToken: String? = nil,
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
package struct StartMFAPhoneResponseInfo: Codable, Sendable, Hashable {
    package var sessionInfo: String?
    package init(sessionInfo: String?) { self.sessionInfo = sessionInfo }
}

/// `AuthProtoFinalizeMFAPhoneRequestInfo`: the verification ID and the code the user typed.
package struct FinalizeMFAPhoneRequestInfo: Codable, Sendable, Hashable {
    package var sessionInfo: String?
    package var code: String?
    package init(sessionInfo: String?, code: String?) {
        self.sessionInfo = sessionInfo
        self.code = code
    }
}

/// `AuthProtoFinalizeMFAPhoneResponseInfo`.
package struct FinalizeMFAPhoneResponseInfo: Codable, Sendable, Hashable {
    package var phoneNumber: String?
    package init(phoneNumber: String?) { self.phoneNumber = phoneNumber }
}

/// `accounts/mfaEnrollment:start`: a signed-in user enrolls a phone as second factor.
/// `{}`: a TOTP factor's marker in an enrollment, and the request to start one (the SDK's
/// AuthProtoStartMFATOTPEnrollmentRequestInfo sends an empty object).
package struct TOTPInfo: Codable, Sendable, Hashable {
    package init() {}
}

/// A TOTP enrollment's secret and how to compute its codes (the SDK's
/// AuthProtoStartMFATOTPEnrollmentResponseInfo, in its AuthProtoFinalizeMFATOTPEnrollmentResponseInfo.swift).
package struct StartMFATOTPResponseInfo: Codable, Sendable, Hashable {
    /// Base32, no padding, as authenticator apps take it.
    package var sharedSecretKey: String
    package var verificationCodeLength: Int?
    package var hashingAlgorithm: String?
    package var periodSec: Int?
    package var sessionInfo: String?
    /// RFC 3339: when the enrollment's session ends.
    package var finalizeEnrollmentTime: String?
    package init(sharedSecretKey: String, verificationCodeLength: Int?, hashingAlgorithm: String?, periodSec: Int?, sessionInfo: String?,
                finalizeEnrollmentTime: String?) {
        self.sharedSecretKey = sharedSecretKey
        self.verificationCodeLength = verificationCodeLength
        self.hashingAlgorithm = hashingAlgorithm
        self.periodSec = periodSec
        self.sessionInfo = sessionInfo
        self.finalizeEnrollmentTime = finalizeEnrollmentTime
    }
}

/// A TOTP code and the enrollment's session it finishes.
package struct MFATOTPVerificationInfo: Codable, Sendable, Hashable {
    package var sessionInfo: String?
    package var verificationCode: String?
    package init(sessionInfo: String?, verificationCode: String?) {
        self.sessionInfo = sessionInfo
        self.verificationCode = verificationCode
    }
}

/// A TOTP code that finishes a sign-in (its factor is the request's `mfaEnrollmentId`).
package struct MFATOTPSignInInfo: Codable, Sendable, Hashable {
    package var verificationCode: String?
    package init(verificationCode: String?) { self.verificationCode = verificationCode }
}

package struct StartMFAEnrollmentRequest: AuthRPCRequest, Hashable {
    package typealias Response = StartMFAEnrollmentResponse
    package static let endpoint = IdentityToolkitEndpoint.startMFAEnrollment
    package static let sdkSendsTenantID = true
    package var idToken: String?
    package var phoneEnrollmentInfo: StartMFAPhoneRequestInfo?
    package var totpEnrollmentInfo: TOTPInfo?
    package var tenantId: String?
    package init(idToken: String?, phoneEnrollmentInfo: StartMFAPhoneRequestInfo? = nil, totpEnrollmentInfo: TOTPInfo? = nil,
                tenantId: String? = nil) {
        self.totpEnrollmentInfo = totpEnrollmentInfo
        self.idToken = idToken
        self.phoneEnrollmentInfo = phoneEnrollmentInfo
        self.tenantId = tenantId
    }
}

package struct StartMFAEnrollmentResponse: Codable, Sendable, Hashable {
    package var phoneSessionInfo: StartMFAPhoneResponseInfo?
    package var totpSessionInfo: StartMFATOTPResponseInfo?
    package init(phoneSessionInfo: StartMFAPhoneResponseInfo? = nil, totpSessionInfo: StartMFATOTPResponseInfo? = nil) {
        self.phoneSessionInfo = phoneSessionInfo
        self.totpSessionInfo = totpSessionInfo
    }
}

/// `accounts/mfaEnrollment:finalize`.
package struct FinalizeMFAEnrollmentRequest: AuthRPCRequest, Hashable {
    package typealias Response = FinalizeMFAEnrollmentResponse
    package static let endpoint = IdentityToolkitEndpoint.finalizeMFAEnrollment
    package static let sdkSendsTenantID = true
    package var idToken: String?
    package var displayName: String?
    package var phoneVerificationInfo: FinalizeMFAPhoneRequestInfo?
    package var totpVerificationInfo: MFATOTPVerificationInfo?
    package var tenantId: String?
    package init(idToken: String?, displayName: String?, phoneVerificationInfo: FinalizeMFAPhoneRequestInfo? = nil,
                totpVerificationInfo: MFATOTPVerificationInfo? = nil, tenantId: String? = nil) {
        self.totpVerificationInfo = totpVerificationInfo
        self.idToken = idToken
        self.displayName = displayName
        self.phoneVerificationInfo = phoneVerificationInfo
        self.tenantId = tenantId
    }
}

package struct FinalizeMFAEnrollmentResponse: Codable, Sendable, Hashable {
    package var idToken: String?
    package var refreshToken: String?
    /// `phoneAuthInfo`, as the service names it (v2 discovery document). FirebaseAuth 12.19 reads
    /// `phoneSessionInfo` here (FinalizeMFAEnrollmentResponse.swift 27), which the service never
    /// sends; the SDK does not use the value, so nothing the app sees depends on the name.
    package var phoneAuthInfo: FinalizeMFAPhoneResponseInfo?
    package init(idToken: String?, refreshToken: String?, phoneAuthInfo: FinalizeMFAPhoneResponseInfo? = nil) {
        self.idToken = idToken
        self.refreshToken = refreshToken
        self.phoneAuthInfo = phoneAuthInfo
    }
}

/// `accounts/mfaEnrollment:withdraw`.
package struct WithdrawMFARequest: AuthRPCRequest, Hashable {
    package typealias Response = WithdrawMFAResponse
    package static let endpoint = IdentityToolkitEndpoint.withdrawMFA
    package static let sdkSendsTenantID = true
    package var idToken: String?
    package var mfaEnrollmentId: String?
    package var tenantId: String?
    package init(idToken: String?, mfaEnrollmentId: String?, tenantId: String? = nil) {
        self.idToken = idToken
        self.mfaEnrollmentId = mfaEnrollmentId
        self.tenantId = tenantId
    }
}

package struct WithdrawMFAResponse: Codable, Sendable, Hashable {
    package var idToken: String?
    package var refreshToken: String?
    package init(idToken: String?, refreshToken: String?) {
        self.idToken = idToken
        self.refreshToken = refreshToken
    }
}

/// `accounts/mfaSignIn:start`: after a first factor answered `mfaPendingCredential`, a code to the
/// enrolled phone.
package struct StartMFASignInRequest: AuthRPCRequest, Hashable {
    package typealias Response = StartMFASignInResponse
    package static let endpoint = IdentityToolkitEndpoint.startMFASignIn
    package static let sdkSendsTenantID = true
    package var mfaPendingCredential: String?
    package var mfaEnrollmentId: String?
    package var phoneSignInInfo: StartMFAPhoneRequestInfo?
    package var tenantId: String?
    package init(mfaPendingCredential: String?, mfaEnrollmentId: String?, phoneSignInInfo: StartMFAPhoneRequestInfo?,
                tenantId: String? = nil) {
        self.mfaPendingCredential = mfaPendingCredential
        self.mfaEnrollmentId = mfaEnrollmentId
        self.phoneSignInInfo = phoneSignInInfo
        self.tenantId = tenantId
    }
}

package struct StartMFASignInResponse: Codable, Sendable, Hashable {
    package var phoneResponseInfo: StartMFAPhoneResponseInfo?
    package init(phoneResponseInfo: StartMFAPhoneResponseInfo?) { self.phoneResponseInfo = phoneResponseInfo }
}

/// `accounts/mfaSignIn:finalize`.
package struct FinalizeMFASignInRequest: AuthRPCRequest, Hashable {
    package typealias Response = FinalizeMFASignInResponse
    package static let endpoint = IdentityToolkitEndpoint.finalizeMFASignIn
    package static let sdkSendsTenantID = true
    package var mfaPendingCredential: String?
    package var phoneVerificationInfo: FinalizeMFAPhoneRequestInfo?
    /// A TOTP factor's code; the SDK sends `mfaEnrollmentId` with it (FinalizeMFASignInRequest.swift 47–50).
    package var totpVerificationInfo: MFATOTPSignInInfo?
    package var mfaEnrollmentId: String?
    package var tenantId: String?
    package init(mfaPendingCredential: String?, phoneVerificationInfo: FinalizeMFAPhoneRequestInfo? = nil,
                totpVerificationInfo: MFATOTPSignInInfo? = nil, mfaEnrollmentId: String? = nil, tenantId: String? = nil) {
        self.totpVerificationInfo = totpVerificationInfo
        self.mfaEnrollmentId = mfaEnrollmentId
        self.mfaPendingCredential = mfaPendingCredential
        self.phoneVerificationInfo = phoneVerificationInfo
        self.tenantId = tenantId
    }
}

package struct FinalizeMFASignInResponse: Codable, Sendable, Hashable {
    package var idToken: String?
    package var refreshToken: String?
    package init(idToken: String?, refreshToken: String?) {
        self.idToken = idToken
        self.refreshToken = refreshToken
    }
}
