@testable import AuthBackend
import Foundation
import IdentityToolkitAPI
import Testing

/// The core's rule families beyond phone sign-in and second factors, each call handled by
/// ``BackendCore`` alone at an instant it names: reCAPTCHA SMS defense (the SDK's side is
/// FirebaseAuth Sources/Swift/Utilities/AuthRecaptchaVerifier.swift: the token's action per call,
/// `clientType` and `recaptchaVersion` on every code request), Sign in with Apple (the SDK's
/// Sources/Swift/AuthProvider/OAuthProvider.swift `appleCredential`: `id_token`, `providerId`,
/// the raw `nonce` in the post body) and user management (the Admin SDKs' calls, as the Auth
/// Emulator's src/emulator/auth/operations.ts answers them).
@Suite("The backend core's rule families: SMS defense, Sign in with Apple, user management")
struct CoreRuleFamilyTests {
    let start = Date(timeIntervalSince1970: 1_700_000_000)
    let number = "+16505551234"

    func core(_ configure: (inout BackendConfiguration) -> Void = { _ in }) throws -> BackendCore { try CoreFixtures.core(configure) }

    /// A token of the simulated reCAPTCHA Enterprise service for `action`, as the app's SDK gets it.
    func enterpriseToken(_ core: inout BackendCore, _ action: RecaptchaAction, at instant: Date) throws -> String {
        try core.handle(now: instant) { call throws(IdentityToolkitError) in
            try call.executeRecaptchaEnterprise(RecaptchaEnterpriseExecuteRequest(
                siteKey: call.configuration.recaptchaSiteKey, action: action.rawValue, bundleID: call.configuration.bundleID))
        }.answer.get().token
    }

    func codeRequest(_ core: inout BackendCore, token: String?, at instant: Date, clientType: String? = "CLIENT_TYPE_IOS",
                     receipt: (String, String)? = nil) -> CoreOutcome<SendVerificationCodeResponse> {
        core.handle(now: instant) { call throws(IdentityToolkitError) in
            try call.sendVerificationCode(SendVerificationCodeRequest(
                phoneNumber: number, iosReceipt: receipt?.0, iosSecret: receipt?.1, captchaResponse: token,
                recaptchaVersion: .recaptchaEnterprise, clientType: clientType), languageCode: nil)
        }
    }

    func code(_ outcome: CoreOutcome<some Any>) -> IdentityToolkitError.Code? {
        if case .failure(let error) = outcome.answer { return error.code }
        return nil
    }

    @Test("SMS defense ENFORCE: a token for the call's action buys one code; no client type, a spent token, another action's token are refused by name")
    func enforce() throws {
        var core = try core { $0.phoneRecaptchaEnforcement = .enforce }
        let token = try enterpriseToken(&core, .sendVerificationCode, at: start)
        #expect(code(codeRequest(&core, token: token, at: start, clientType: nil)) == .missingClientType)
        let sent = codeRequest(&core, token: token, at: start.addingTimeInterval(1))
        #expect(try sent.answer.get().sessionInfo?.isEmpty == false)
        #expect(sent.events.contains(.codeRequested(phoneNumber: number, proof: .recaptchaEnterprise, receipt: nil, endpoint: .sendVerificationCode)))
        #expect(code(codeRequest(&core, token: token, at: start.addingTimeInterval(2))) == .invalidRecaptchaToken, "a token is single-use")
        let other = try enterpriseToken(&core, .mfaSmsSignIn, at: start.addingTimeInterval(3))
        let wrong = codeRequest(&core, token: other, at: start.addingTimeInterval(3))
        #expect(code(wrong) == .invalidRecaptchaAction)
        let late = try enterpriseToken(&core, .sendVerificationCode, at: start.addingTimeInterval(4))
        #expect(code(codeRequest(&core, token: late, at: start.addingTimeInterval(4 + BackendCore.enterpriseTokenLifetime + 1))) == .invalidRecaptchaToken,
                "two minutes, then expired")
    }

    @Test("SMS defense: a toll-fraud score above the project's threshold is refused; AUDIT lets a request with a silent push's proof through when its token fails")
    func tollFraudAndAudit() throws {
        var strict = try core {
            $0.phoneRecaptchaEnforcement = .enforce
            $0.useSmsTollFraudProtection = true
            $0.tollFraudThreshold = 0.5
            $0.tollFraudRiskScore = 0.9
        }
        let token = try enterpriseToken(&strict, .sendVerificationCode, at: start)
        let refused = codeRequest(&strict, token: token, at: start)
        #expect(code(refused) == .invalidRecaptchaToken)
        guard case .recaptchaAssessment(_, .enforce, let assessment) = refused.events.first else {
            Issue.record("no assessment: \(refused.events)")
            return
        }
        #expect(assessment.verdict == .tollFraud && assessment.riskScore == 0.9)

        var audit = try core { $0.phoneRecaptchaEnforcement = .audit }
        let (_, receipt, secret, _) = try audit.handle(now: start) { call throws(IdentityToolkitError) in
            try call.issueAppCredential(VerifyClientRequest(appToken: String(repeating: "ab", count: 32), isSandbox: true))
        }.answer.get()
        #expect(code(codeRequest(&audit, token: "NO_RECAPTCHA", at: start.addingTimeInterval(1))) == .invalidAppCredential,
                "AUDIT without another proof")
        let fellBack = codeRequest(&audit, token: "NO_RECAPTCHA", at: start.addingTimeInterval(2), receipt: (receipt, secret))
        #expect(try fellBack.answer.get().sessionInfo?.isEmpty == false)
        #expect(fellBack.events.map(\.kind) == ["recaptchaAssessment", "codeRequested", "smsSent"])
    }

    @Test("Sign in with Apple: a new user, then the same one; the token is single-use; the raw nonce must hash to the token's; another audience is refused with its cause")
    func apple() throws {
        var core = try core()
        let nonce = "raw-nonce-1"
        func authorize(_ user: String, nonce: String?, clientID: String? = nil, first: Bool) throws -> String {
            try core.appleID.authorize(clientID: clientID ?? core.configuration.bundleID, appleUser: user, nonce: nonce.map(BackendCore.digest),
                                       givenName: "Ada", familyName: "Lovelace", issuedAt: start, firstConsent: first).identityToken
        }
        func signIn(_ token: String, nonce: String?, at instant: Date) -> CoreOutcome<SignInDecision<VerifyAssertionResponse>> {
            let body = "id_token=\(token)&providerId=apple.com" + (nonce.map { "&nonce=\($0)" } ?? "")
            return core.handle(now: instant) { call throws(IdentityToolkitError) in
                try call.signInWithIdp(VerifyAssertionRequest(postBody: body, returnSecureToken: true))
            }
        }
        let first = try authorize("ada", nonce: nonce, first: true)
        let created = signIn(first, nonce: nonce, at: start)
        guard case .success(.tokens(let grant, _)) = created.answer else {
            Issue.record("no sign-in: \(created.events)")
            return
        }
        #expect(grant.provider == .apple && created.events.map(\.kind) == ["appleSignIn"])
        #expect(created.events.first == .appleSignIn(uid: grant.user.localId, sub: grant.user.appleSub ?? "", isNewUser: true, linked: false))
        #expect(code(signIn(first, nonce: nonce, at: start.addingTimeInterval(1))) == .missingOrInvalidNonce, "a replayed token")

        let again = signIn(try authorize("ada", nonce: nonce, first: false), nonce: nonce, at: start.addingTimeInterval(2))
        #expect(again.events.first == .appleSignIn(uid: grant.user.localId, sub: grant.user.appleSub ?? "", isNewUser: false, linked: false))
        #expect(code(signIn(try authorize("ada", nonce: nonce, first: false), nonce: "another", at: start.addingTimeInterval(3))) == .missingOrInvalidNonce)
        let foreign = signIn(try authorize("ada", nonce: nil, clientID: "com.example.other", first: false), nonce: nil, at: start.addingTimeInterval(4))
        #expect(code(foreign) == .invalidIDPResponse && foreign.events.first?.refusal?.cause == .appleTokenAudience)
    }

    @Test("user management: an admin creates, updates, disables and deletes a user; a taken email and a bad phone number are refused; the first batch over 1,000 is refused whole")
    func userManagement() throws {
        var core = try core()
        let created = try core.handle(now: start) { call throws(IdentityToolkitError) in
            try call.adminCreateUser(SignUpNewUserRequest(email: "Ada@Example.com", displayName: "Ada", phoneNumber: number), hash: nil)
        }.answer.get()
        let uid = try #require(created.localId)
        #expect(core.state.projectUsers.byID[uid]?.email == "ada@example.com" && core.state.projectUsers.byID[uid]?.phoneNumber == number)
        let taken = core.handle(now: start) { call throws(IdentityToolkitError) in
            try call.adminCreateUser(SignUpNewUserRequest(email: "ada@example.com"), hash: nil)
        }
        #expect(code(taken) == .emailExists && taken.records.isEmpty)
        let badPhone = core.handle(now: start) { call throws(IdentityToolkitError) in
            try call.adminCreateUser(SignUpNewUserRequest(phoneNumber: "555"), hash: nil)
        }
        #expect(code(badPhone) == .invalidPhoneNumber && badPhone.records.isEmpty)

        let disabled = core.handle(now: start.addingTimeInterval(1)) { call throws(IdentityToolkitError) in
            try call.adminUpdate(SetAccountInfoRequest(localId: uid, displayName: "Countess", disableUser: true), hash: nil)
        }
        #expect(throws: Never.self) { try disabled.answer.get() }
        #expect(core.state.projectUsers.byID[uid]?.displayName == "Countess" && core.state.projectUsers.byID[uid]?.disabled == true)

        let many = (0...BackendCore.maximumBatchSize).map { "u\($0)" }
        let tooMany = core.handle(now: start.addingTimeInterval(2)) { call throws(IdentityToolkitError) in
            try call.adminBatchDelete(BatchDeleteAccountsRequest(localIds: many, force: true))
        }
        #expect(tooMany.records.isEmpty && code(tooMany) != nil)
        let deleted = core.handle(now: start.addingTimeInterval(3)) { call throws(IdentityToolkitError) in
            try call.adminDelete(DeleteAccountRequest(idToken: nil, localId: uid))
        }
        #expect(throws: Never.self) { try deleted.answer.get() }
        #expect(core.state.projectUsers.byID[uid] == nil && core.state.projectUsers.user(email: "ada@example.com") == nil && core.state.projectUsers.idByPhone[number] == nil)
    }

    /// Audit 3, B-3: the emulator's signUp answers a taken email before a weak password
    /// (firebase-tools operations.ts 198–220).
    @Test("sign-up: a taken email is EMAIL_EXISTS before a weak password; a new email with a weak one WEAK_PASSWORD")
    func signUpOrder() throws {
        var core = try core()
        _ = try core.handle(now: start) { call throws(IdentityToolkitError) in
            try call.adminCreateUser(SignUpNewUserRequest(email: "ada@example.com"), hash: CoreFixtures.hash)
        }.answer.get()
        func signUp(_ email: String) -> CoreOutcome<String?> {
            core.handle(now: start) { call throws(IdentityToolkitError) in
                try call.signUpPassword(SignUpNewUserRequest(email: email, password: "123"))
            }
        }
        #expect(code(signUp("Ada@example.com")) == .emailExists)
        #expect(code(signUp("bob@example.com")) == BackendCore.weakPassword.code)
    }
}
