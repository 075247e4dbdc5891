@testable import AuthBackend
import Foundation
import IdentityToolkitAPI
import Testing

/// Every call of one sign-in carries its ``SignInID``, as a trace's spans carry the trace's: the
/// call that starts it draws it, and what it leaves for the next call (the receipt, the session,
/// the pending credential, the reCAPTCHA token) carries it on. The SDK's steps are those of
/// FirebaseAuth Sources/Swift/AuthProvider/PhoneAuthProvider.swift (verifyClient, then the code
/// request, or reCAPTCHA when no push comes) and MultiFactor/MultiFactorResolver.swift.
@Suite("Sign-in IDs: one per sign-in, carried from its first call to its last")
struct SignInIDTests {
    let start = Date(timeIntervalSince1970: 1_700_000_000)
    let number = "+16505551234"
    let token = String(repeating: "ab", count: 32)

    func core(_ configure: (inout BackendConfiguration) -> Void = { _ in }) throws -> BackendCore { try CoreFixtures.core(configure) }

    func push(_ core: inout BackendCore, at instant: Date) throws -> (receipt: String, secret: String, signIn: SignInID) {
        let outcome = core.handle(now: instant) { core throws(IdentityToolkitError) in
            try core.issueAppCredential(VerifyClientRequest(appToken: token, isSandbox: true))
        }
        let (_, receipt, secret, signIn) = try outcome.answer.get()
        #expect(outcome.signIn == signIn)
        return (receipt, secret, signIn)
    }

    func fallbackCode(_ core: inout BackendCore, at instant: Date) throws -> (token: CoreOutcome<String>, code: CoreOutcome<SendVerificationCodeResponse>) {
        let token = core.handle(now: instant) { core throws(IdentityToolkitError) in core.issueRecaptchaToken(eventID: "E") }
        let recaptcha = try token.answer.get()
        let code = core.handle(now: instant.addingTimeInterval(1)) { core throws(IdentityToolkitError) in
            try core.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: number, recaptchaToken: recaptcha), languageCode: nil)
        }
        return (token, code)
    }

    @Test("a silent-push sign-in: the push, the code request, a wrong code and the sign-in carry one ID; the next sign-in another")
    func silentPush() throws {
        var core = try core()
        let pushed = try push(&core, at: start)
        let code = core.handle(now: start.addingTimeInterval(1)) { core throws(IdentityToolkitError) in
            try core.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: number, iosReceipt: pushed.receipt, iosSecret: pushed.secret),
                                          languageCode: nil)
        }
        let sessionInfo = try code.answer.get().sessionInfo
        let sent = try #require(core.state.sessions[sessionInfo ?? ""]?.code)
        let wrong = core.handle(now: start.addingTimeInterval(2)) { core throws(IdentityToolkitError) in
            try core.signInWithPhoneNumber(VerifyPhoneNumberRequest(sessionInfo: sessionInfo, code: sent == "000000" ? "111111" : "000000"))
        }
        let right = core.handle(now: start.addingTimeInterval(3)) { core throws(IdentityToolkitError) in
            try core.signInWithPhoneNumber(VerifyPhoneNumberRequest(sessionInfo: sessionInfo, code: sent))
        }
        #expect(code.events.map(\.kind) == ["codeRequested", "smsSent"] && wrong.events.map(\.kind) == ["rejected"] && right.events.map(\.kind) == ["signedIn"])
        #expect([code.signIn, wrong.signIn, right.signIn] == [pushed.signIn, pushed.signIn, pushed.signIn])

        let next = try push(&core, at: start.addingTimeInterval(4))
        #expect(next.signIn != pushed.signIn)
        // A session the backend never issued names no sign-in: the refusal is one of its own.
        let unknown = core.handle(now: start.addingTimeInterval(5)) { core throws(IdentityToolkitError) in
            try core.signInWithPhoneNumber(VerifyPhoneNumberRequest(sessionInfo: "not-issued", code: "123456"))
        }
        #expect(unknown.events.map(\.kind) == ["rejected"] && unknown.signIn != nil && unknown.signIn != pushed.signIn && unknown.signIn != next.signIn)
    }

    @Test("the reCAPTCHA fallback continues the one sign-in whose push got no code request, within ten minutes")
    func fallback() throws {
        var core = try core()
        let pushed = try push(&core, at: start)
        let (token, code) = try fallbackCode(&core, at: start.addingTimeInterval(6))
        #expect(token.signIn == pushed.signIn && code.signIn == pushed.signIn)
        #expect(code.events.first == .codeRequested(phoneNumber: number, proof: .reCAPTCHA, receipt: nil, endpoint: .sendVerificationCode))
        // That sign-in has its code now: another fallback is a sign-in of its own.
        let again = try fallbackCode(&core, at: start.addingTimeInterval(60))
        #expect(again.token.signIn != nil && again.token.signIn != pushed.signIn && again.code.signIn == again.token.signIn)
    }

    @Test("a fallback starts its own sign-in when no push waits, when two do, or when the push is over ten minutes old")
    func fallbackAmbiguity() throws {
        var none = try core()
        let alone = try fallbackCode(&none, at: start)
        #expect(alone.token.signIn != nil && alone.code.signIn == alone.token.signIn)

        var two = try core()
        let first = try push(&two, at: start)
        let second = try push(&two, at: start.addingTimeInterval(1))
        let which = try fallbackCode(&two, at: start.addingTimeInterval(6))
        #expect(![first.signIn, second.signIn].contains(which.token.signIn))

        var late = try core()
        let old = try push(&late, at: start)
        let after = try fallbackCode(&late, at: start.addingTimeInterval(BackendCore.fallbackWindow + 1))
        #expect(after.token.signIn != old.signIn)
    }

    @Test("a compacted state waits for the same fallbacks as the live one")
    func compaction() throws {
        var core = try core()
        let answered = try push(&core, at: start)
        _ = core.handle(now: start.addingTimeInterval(1)) { core throws(IdentityToolkitError) in
            try core.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: number, iosReceipt: answered.receipt, iosSecret: answered.secret),
                                          languageCode: nil)
        }
        let waiting = try push(&core, at: start.addingTimeInterval(2))
        #expect(core.state.awaitingCode.keys.sorted { $0.rawValue < $1.rawValue } == [waiting.signIn])
        var rebuilt = BackendState()
        for record in core.state.records { rebuilt.apply(record) }
        #expect(rebuilt.awaitingCode.storage == core.state.awaitingCode.storage)
    }

    @Test("a second factor: the first factor's pending credential carries its ID to the second factor's code and sign-in")
    func secondFactor() throws {
        let enrolled = try CoreFixtures.enrolledUser()
        var core = enrolled.core
        let (enrollment, hash) = (enrolled.enrollment, CoreFixtures.hash)
        #expect(enrolled.finished.signIn != nil && enrolled.finished.signIn == enrolled.opened.signIn, "enrolling is one sign-in: its code and its finish")

        let first = core.handle(now: start.addingTimeInterval(10)) { core throws(IdentityToolkitError) in
            try core.signInWithPassword(email: "ada@example.com", verifiedHash: hash.hash, tenant: nil)
        }
        guard case .success(.answer(let response)) = first.answer, let pending = response.mfaPendingCredential else {
            Issue.record("a user with a second factor got a session from the password alone")
            return
        }
        #expect(first.events.map(\.kind) == ["secondFactorRequired"] && first.signIn != nil && first.signIn != enrolled.finished.signIn)
        let code = core.handle(now: start.addingTimeInterval(11)) { core throws(IdentityToolkitError) in
            try core.startMFASignIn(StartMFASignInRequest(mfaPendingCredential: pending, mfaEnrollmentId: enrollment.id,
                                                          phoneSignInInfo: StartMFAPhoneRequestInfo(phoneNumber: nil)))
        }
        let finished = core.handle(now: start.addingTimeInterval(12)) { core throws(IdentityToolkitError) in
            try core.finalizeMFASignIn(FinalizeMFASignInRequest(
                mfaPendingCredential: pending,
                phoneVerificationInfo: FinalizeMFAPhoneRequestInfo(sessionInfo: try code.answer.get().phoneResponseInfo?.sessionInfo, code: CoreFixtures.secondFactorCode)))
        }
        #expect(finished.events.map(\.kind) == ["secondFactorSignedIn"])
        #expect(code.signIn == first.signIn && finished.signIn == first.signIn)
    }

    @Test("what is no sign-in's step carries no ID: the project's reCAPTCHA config, an account deleted")
    func noSignIn() throws {
        var core = try core()
        let config = core.handle(now: start) { core throws(IdentityToolkitError) in
            try core.recaptchaConfig(GetRecaptchaConfigRequest(clientType: "CLIENT_TYPE_IOS", version: .recaptchaEnterprise))
        }
        #expect(config.events.map(\.kind) == ["recaptchaConfig"] && config.signIn == nil)
    }
}
