@testable import AuthBackend
import Foundation
import IdentityToolkitAPI
import Testing

/// TOTP codes as a value: RFC 6238's own test vectors (Appendix B, SHA-1, the ASCII secret
/// "12345678901234567890"; its eight-digit codes' last six digits are the six-digit codes, as
/// RFC 4226's truncation makes them), RFC 4648's Base32 vectors, and the window and reuse rule
/// the backend's TOTP second factors apply.
@Suite("TOTP codes: RFC 6238's vectors, Base32, the adjacent intervals and a code used once")
struct TOTPCodesTests {
    let secret = Array("12345678901234567890".utf8)

    @Test("RFC 6238 Appendix B (SHA-1): the codes at its six instants")
    func vectors() {
        let expected: [(Double, String)] = [(59, "287082"), (1_111_111_109, "081804"), (1_111_111_111, "050471"),
                                            (1_234_567_890, "005924"), (2_000_000_000, "279037"), (20_000_000_000, "353130")]
        for (seconds, code) in expected {
            let instant = Date(timeIntervalSince1970: seconds)
            #expect(TOTPCodes.code(secret: secret, step: TOTPCodes.step(instant)) == code, "at \(seconds)")
        }
    }

    @Test("Base32 (RFC 4648 section 10) both ways, without padding; a character outside the alphabet is nil")
    func base32() {
        for (text, encoded) in [("", ""), ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"), ("fooba", "MZXW6YTB"),
                                ("foobar", "MZXW6YTBOI")] {
            #expect(TOTPCodes.base32(Array(text.utf8)) == encoded)
            #expect(TOTPCodes.bytes(base32: encoded) == Array(text.utf8))
        }
        #expect(TOTPCodes.bytes(base32: "mzxw6ytboi======") == Array("foobar".utf8), "any case, padding ignored")
        #expect(TOTPCodes.bytes(base32: "MZXW1") == nil, "1 is not Base32")
    }

    @Test("a code matches within the adjacent intervals only, once: not at or before the step last used")
    func window() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let step = TOTPCodes.step(now)
        let previous = TOTPCodes.code(secret: secret, step: step - 1)
        #expect(TOTPCodes.matchingStep(previous, secret: secret, at: now, adjacentIntervals: 1, after: nil) == step - 1)
        #expect(TOTPCodes.matchingStep(previous, secret: secret, at: now, adjacentIntervals: 0, after: nil) == nil)
        let late = TOTPCodes.code(secret: secret, step: step - 6)
        #expect(TOTPCodes.matchingStep(late, secret: secret, at: now, adjacentIntervals: 5, after: nil) == nil, "six steps off, five allowed")
        let current = TOTPCodes.code(secret: secret, step: step)
        #expect(TOTPCodes.matchingStep(current, secret: secret, at: now, adjacentIntervals: 5, after: step) == nil, "used already")
        #expect(TOTPCodes.matchingStep(current, secret: secret, at: now, adjacentIntervals: 5, after: step - 1) == step)
        #expect(TOTPCodes.matchingStep("12345", secret: secret, at: now, adjacentIntervals: 5, after: nil) == nil)
        #expect(TOTPCodes.matchingStep("12345a", secret: secret, at: now, adjacentIntervals: 5, after: nil) == nil)
    }

    /// The backend's rules around the codes (Core/MultiFactor.swift), each call at an instant it names.
    @Test("TOTP off is OPERATION_NOT_ALLOWED; a session past its 5 minutes SESSION_EXPIRED; another user's session INVALID_SESSION_INFO; the right code enrolls")
    func enrollmentRules() throws {
        let start = CoreFixtures.start
        func user(_ core: inout BackendCore, _ email: String) throws -> String {
            let uid = try #require(try core.handle(now: start) { call throws(IdentityToolkitError) in
                try call.adminCreateUser(SignUpNewUserRequest(email: email, emailVerified: true), hash: CoreFixtures.hash)
            }.answer.get().localId)
            return core.tokenSigner.token(for: try #require(core.state.projectUsers.byID[uid]), provider: .password, now: start)
        }
        func code(_ outcome: CoreOutcome<some Any>) -> IdentityToolkitError.Code? {
            if case .failure(let error) = outcome.answer { return error.code }
            return nil
        }
        var off = try CoreFixtures.core { $0.totpAdjacentIntervals = nil }
        let offToken = try user(&off, "a@example.com")
        #expect(code(off.handle(now: start) { call throws(IdentityToolkitError) in
            try call.startMFAEnrollment(StartMFAEnrollmentRequest(idToken: offToken, totpEnrollmentInfo: TOTPInfo()))
        }) == .operationNotAllowed)

        var core = try CoreFixtures.core()
        let ada = try user(&core, "ada@example.com")
        let bob = try user(&core, "bob@example.com")
        let started = try core.handle(now: start) { call throws(IdentityToolkitError) in
            try call.startMFAEnrollment(StartMFAEnrollmentRequest(idToken: ada, totpEnrollmentInfo: TOTPInfo()))
        }.answer.get()
        let info = try #require(started.totpSessionInfo)
        #expect(info.verificationCodeLength == 6 && info.periodSec == 30 && info.hashingAlgorithm == "SHA1")
        let secret = try #require(TOTPCodes.bytes(base32: info.sharedSecretKey))
        #expect(secret.count == 20)
        func finish(_ idToken: String, at instant: Date) -> CoreOutcome<SignInDecision<FinalizeMFAEnrollmentResponse>> {
            core.handle(now: instant) { call throws(IdentityToolkitError) in
                try call.finalizeMFAEnrollment(FinalizeMFAEnrollmentRequest(
                    idToken: idToken, displayName: "app", totpVerificationInfo: MFATOTPVerificationInfo(
                        sessionInfo: info.sessionInfo, verificationCode: TOTPCodes.code(secret: secret, step: TOTPCodes.step(instant)))))
            }
        }
        #expect(code(finish(bob, at: start)) == .invalidSessionInfo)
        #expect(code(finish(ada, at: start.addingTimeInterval(301))) == .sessionExpired)
        let enrolled = finish(ada, at: start.addingTimeInterval(60))
        #expect(code(enrolled) == nil)
        #expect(enrolled.events.map(\.kind) == ["secondFactorEnrolled"])
        let factor = try #require(core.state.projectUsers.user(email: "ada@example.com")?.mfaEnrollments?.first)
        #expect(factor.isTOTP && factor.phoneNumber == nil && factor.hint.totpInfo != nil && factor.hint.phoneInfo == nil)
        #expect(code(finish(ada, at: start.addingTimeInterval(90))) == .invalidSessionInfo, "the session is spent")
    }
}
