@testable import AuthBackend
import Foundation
import IdentityToolkitAPI
import Testing

/// The backend's rules decided from its state alone: a code check, a pending credential, an app
/// credential, a reCAPTCHA token and a temporary proof, as
/// values built by the state's own records (no actor, no journal, no HTTP).
@Suite("The backend's rules (codes, pending credentials, app proofs, temporary proofs), without I/O")
struct BackendRuleTests {
    let start = Date(timeIntervalSince1970: 1_700_000_000)
    let configuration = BackendConfiguration()

    func state(_ records: [BackendRecord]) -> BackendState {
        var state = BackendState()
        for record in records { state.apply(record) }
        return state
    }

    func refusal(_ check: BackendState.CodeCheck) -> IdentityToolkitError.Code? {
        if case .refuse(let error) = check { error.code } else { nil }
    }

    @Test("the right code spends the session; a wrong one counts; a spent, expired, other-purpose or unknown session is refused with its code")
    func codes() {
        let opened = state([.session(id: "S", phoneNumber: "+16505551234", code: "123456", createdAt: start)])
        #expect(refusal(opened.checkCode(sessionInfo: nil, code: "123456", purpose: nil, now: start, configuration: configuration)) == .missingSessionInfo)
        #expect(refusal(opened.checkCode(sessionInfo: "S", code: "", purpose: nil, now: start, configuration: configuration)) == .missingCode)
        #expect(refusal(opened.checkCode(sessionInfo: "T", code: "123456", purpose: nil, now: start, configuration: configuration)) == .invalidSessionInfo)
        #expect(refusal(opened.checkCode(sessionInfo: "S", code: "123456", purpose: .mfaEnrollment(localId: "u"), now: start,
                                         configuration: configuration)) == .invalidSessionInfo)
        #expect(opened.checkCode(sessionInfo: "S", code: "654321", purpose: nil, now: start, configuration: configuration) == .wrongCode(sessionInfo: "S"))
        guard case .spend(let spent, let session) = opened.checkCode(sessionInfo: "S", code: "123456", purpose: nil, now: start,
                                                                     configuration: configuration) else {
            Issue.record("the right code was not taken")
            return
        }
        #expect(spent == "S" && session.phoneNumber == "+16505551234")
        let late = start.addingTimeInterval(configuration.codeLifetime)
        #expect(refusal(opened.checkCode(sessionInfo: "S", code: "123456", purpose: nil, now: late, configuration: configuration)) == .sessionExpired)
        // A spent session is forgotten, as the emulator deletes a used verification code
        // (firebase-tools src/emulator/auth/operations.ts, verifyPhoneNumber): it answers as an
        // unknown one, and no longer stands for its number's latest code.
        let used = state([.session(id: "S", phoneNumber: "+1", code: "123456", createdAt: start), .sessionUsed(session: "S")])
        #expect(used.sessions.isEmpty && used.latestSession.isEmpty)
        #expect(refusal(used.checkCode(sessionInfo: "S", code: "123456", purpose: nil, now: start, configuration: configuration)) == .invalidSessionInfo)
    }

    @Test("after the allowed wrong codes even the right one is refused: TOO_MANY_ATTEMPTS_TRY_LATER")
    func attempts() {
        let records: [BackendRecord] = [.session(id: "S", phoneNumber: "+1", code: "123456", createdAt: start)]
            + Array(repeating: .wrongCode(session: "S"), count: configuration.maximumCodeAttempts)
        #expect(refusal(state(records).checkCode(sessionInfo: "S", code: "123456", purpose: nil, now: start, configuration: configuration))
                == .tooManyAttemptsTryLater)
    }

    @Test("a pending credential: valid once, in time, for a user who exists; otherwise refused with the cause explain reads")
    func pending() {
        let user = BackendUser(localId: "u", createdAt: start)
        let lifetime = configuration.mfaPendingCredentialLifetime
        let issued = state([.user(user), .mfaPending(digest: "D", localId: "u", provider: .apple, at: start)])
        #expect(issued.checkPending(digest: "D", now: start, lifetime: lifetime) == .valid(digest: "D", provider: .apple, user: user))
        func cause(_ check: BackendState.PendingCheck) -> RejectionCause? { if case .refuse(_, let cause) = check { cause } else { nil } }
        #expect(cause(issued.checkPending(digest: "X", now: start, lifetime: lifetime)) == .pendingCredentialUnknown)
        #expect(cause(issued.checkPending(digest: "D", now: start.addingTimeInterval(lifetime + 1), lifetime: lifetime)) == .pendingCredentialExpired)
        let spent = state([.user(user), .mfaPending(digest: "D", localId: "u", provider: .apple, at: start), .mfaPendingUsed(digest: "D")])
        #expect(cause(spent.checkPending(digest: "D", now: start, lifetime: lifetime)) == .pendingCredentialSpent)
        let orphan = state([.mfaPending(digest: "D", localId: "gone", provider: .apple, at: start)])
        guard case .refuse(let error, nil) = orphan.checkPending(digest: "D", now: start, lifetime: lifetime) else {
            Issue.record("a pending credential of a deleted user was taken")
            return
        }
        #expect(error.code == .userNotFound)
    }

    @Test("a code request: re-entrant while the number's code is valid, per purpose; quotas and the region policy for real numbers only")
    func sessionRequests() {
        var configuration = configuration
        configuration.smsPerNumberPerDay = 1
        configuration.smsRegionPolicy = .allowlistOnly(["US"])
        let number = "+16505551234"
        let sms = SMSMessage(phoneNumber: number, code: "111111", sessionInfo: "S", languageCode: nil, text: "111111", sentAt: start)
        let sent = state([.session(id: "S", phoneNumber: number, code: "111111", createdAt: start), .sms(sms)])
        #expect(sent.requestSession(number: number, purpose: nil, testCode: nil, now: start, configuration: configuration) == .reuse(sessionInfo: "S"))
        let later = start.addingTimeInterval(configuration.codeLifetime)
        guard case .refuse(let quota) = sent.requestSession(number: number, purpose: nil, testCode: nil, now: later, configuration: configuration) else {
            Issue.record("a second SMS within the day's quota of one was sent")
            return
        }
        #expect(quota.code == .quotaExceeded)
        #expect(sent.requestSession(number: number, purpose: .mfaEnrollment(localId: "u"), testCode: "654321", now: later,
                                    configuration: configuration) == .open(testCode: "654321"))
        guard case .refuse(let region) = BackendState().requestSession(number: "+442071838750", purpose: nil, testCode: nil, now: start,
                                                                       configuration: configuration) else {
            Issue.record("a region outside the allowlist got an SMS")
            return
        }
        #expect(region.code == .operationNotAllowed)
        #expect(BackendState().requestSession(number: "+442071838750", purpose: nil, testCode: "123456", now: start,
                                              configuration: configuration) == .open(testCode: "123456"))
        #expect(sent.requestSession(number: number, purpose: nil, testCode: nil, now: later.addingTimeInterval(86_400),
                                    configuration: configuration) == .open(testCode: nil))
    }

    func refusal(_ check: BackendState.AppCredentialCheck) -> IdentityToolkitError.Code? {
        if case .refuse(let error) = check { error.code } else { nil }
    }

    @Test("an app credential: verifyClient's receipt with its secret, in time; a missing secret, another secret, an unknown or old receipt are refused")
    func appCredentials() {
        let issued = state([.receipt(id: "R", secretSHA256: BackendCore.digest("SECRET"), appToken: "AB", issuedAt: start)])
        let lifetime = configuration.receiptLifetime
        #expect(issued.checkAppCredential(receipt: "R", secretDigest: BackendCore.digest("SECRET"), now: start, lifetime: lifetime) == .valid)
        #expect(refusal(issued.checkAppCredential(receipt: "R", secretDigest: nil, now: start, lifetime: lifetime)) == .missingAppCredential)
        #expect(refusal(issued.checkAppCredential(receipt: "R", secretDigest: BackendCore.digest("OTHER"), now: start, lifetime: lifetime))
            == .invalidAppCredential)
        #expect(refusal(issued.checkAppCredential(receipt: "Q", secretDigest: BackendCore.digest("SECRET"), now: start, lifetime: lifetime))
            == .invalidAppCredential)
        #expect(refusal(issued.checkAppCredential(receipt: "R", secretDigest: BackendCore.digest("SECRET"),
                                                  now: start.addingTimeInterval(lifetime + 1), lifetime: lifetime)) == .invalidAppCredential)
    }

    @Test("a reCAPTCHA token is spent once, in time: unknown is MALFORMED, spent or old is EXPIRED")
    func recaptchaTokens() {
        let digest = BackendCore.digest("03Atoken")
        let lifetime = configuration.recaptchaTokenLifetime
        let issued = state([.recaptcha(digest: digest, eventID: "E", issuedAt: start)])
        #expect(issued.checkRecaptchaToken(digest: digest, now: start, lifetime: lifetime) == .spend(digest: digest))
        #expect(issued.checkRecaptchaToken(digest: "other", now: start, lifetime: lifetime)
            == .refuse(IdentityToolkitError(.captchaCheckFailed, "Recaptcha verification failed - MALFORMED")))
        let expired = BackendState.RecaptchaTokenCheck.refuse(IdentityToolkitError(.captchaCheckFailed, "Recaptcha verification failed - EXPIRED"))
        #expect(issued.checkRecaptchaToken(digest: digest, now: start.addingTimeInterval(lifetime + 1), lifetime: lifetime) == expired)
        let spent = state([.recaptcha(digest: digest, eventID: "E", issuedAt: start), .recaptchaUsed(digest: digest)])
        #expect(spent.checkRecaptchaToken(digest: digest, now: start, lifetime: lifetime) == expired)
    }

    @Test("a temporary proof signs in once, for its own number, in time")
    func temporaryProofs() {
        let digest = BackendCore.digest("PROOF")
        let number = "+16505551234"
        let lifetime = configuration.temporaryProofLifetime
        let issued = state([.temporaryProof(digest: digest, phoneNumber: number, at: start)])
        #expect(issued.checkTemporaryProof(digest: digest, claimedNumber: number, now: start, lifetime: lifetime) == .spend(digest: digest, phoneNumber: number))
        #expect(issued.checkTemporaryProof(digest: digest, claimedNumber: nil, now: start, lifetime: lifetime)
            == .refuse(IdentityToolkitError(.missingPhoneNumber)))
        let invalid = BackendState.TemporaryProofCheck.refuse(IdentityToolkitError(.invalidTemporaryProof))
        #expect(issued.checkTemporaryProof(digest: digest, claimedNumber: "+16505550000", now: start, lifetime: lifetime) == invalid)
        #expect(issued.checkTemporaryProof(digest: digest, claimedNumber: number, now: start.addingTimeInterval(lifetime + 1), lifetime: lifetime) == invalid)
        let spent = state([.temporaryProof(digest: digest, phoneNumber: number, at: start), .temporaryProofUsed(digest: digest)])
        #expect(spent.checkTemporaryProof(digest: digest, claimedNumber: number, now: start, lifetime: lifetime) == invalid)
    }
}
