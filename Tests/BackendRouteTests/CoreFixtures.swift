@testable import AuthBackend
import Foundation
import IdentityToolkitAPI
import Testing

/// What the tests of the core alone share: a core on a configuration, and a user with a phone
/// second factor enrolled through the core's own calls.
enum CoreFixtures {
    static let start = Date(timeIntervalSince1970: 1_700_000_000)
    /// The second factor's test number, and its fixed code.
    static let secondFactorNumber = "+16505550111"
    static let secondFactorCode = "222333"
    /// The password hash the enrolled user signs in with (the emulator's `fakeHash` form).
    static let hash = PasswordHash(hash: "fakeHash:salt=s:password=pw", salt: "s")

    /// A core with no users, on the default configuration changed by `configure`.
    static func core(_ configure: (inout BackendConfiguration) -> Void = { _ in }) throws -> BackendCore {
        var configuration = BackendConfiguration()
        configure(&configuration)
        return try BackendCore(configuration: configuration)
    }

    /// A core whose user `ada@example.com` (password hash ``hash``) enrolled ``secondFactorNumber``
    /// as a second factor at `start` + 1 and + 2 s: the enrollment's two calls, as the SDK makes
    /// them (MultiFactor.swift `enroll(with:displayName:)`), and what they did.
    struct Enrolled {
        var core: BackendCore
        let user: BackendUser
        let enrollment: MFAEnrollmentRecord
        let opened: CoreOutcome<StartMFAEnrollmentResponse>
        let finished: CoreOutcome<SignInDecision<FinalizeMFAEnrollmentResponse>>
    }

    static func enrolledUser() throws -> Enrolled {
        var core = try core { $0.testPhoneNumbers = [secondFactorNumber: secondFactorCode] }
        let created = try core.handle(now: start) { call throws(IdentityToolkitError) in
            try call.adminCreateUser(SignUpNewUserRequest(email: "ada@example.com", emailVerified: true), hash: hash)
        }.answer.get()
        let user = try #require(core.state.projectUsers.byID[created.localId ?? ""])
        let idToken = core.tokenSigner.token(for: user, provider: .password, now: start)
        let opened = core.handle(now: start.addingTimeInterval(1)) { call throws(IdentityToolkitError) in
            try call.startMFAEnrollment(StartMFAEnrollmentRequest(idToken: idToken, phoneEnrollmentInfo: StartMFAPhoneRequestInfo(phoneNumber: secondFactorNumber)))
        }
        let sessionInfo = try opened.answer.get().phoneSessionInfo?.sessionInfo
        let finished = core.handle(now: start.addingTimeInterval(2)) { call throws(IdentityToolkitError) in
            try call.finalizeMFAEnrollment(FinalizeMFAEnrollmentRequest(
                idToken: idToken, displayName: "work", phoneVerificationInfo: FinalizeMFAPhoneRequestInfo(sessionInfo: sessionInfo, code: secondFactorCode)))
        }
        let enrollment = try #require(core.state.projectUsers.byID[user.localId]?.mfaEnrollments?.first)
        return Enrolled(core: core, user: user, enrollment: enrollment, opened: opened, finished: finished)
    }
}
