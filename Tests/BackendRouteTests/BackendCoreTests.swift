@testable import AuthBackend
import Foundation
import IdentityToolkitAPI
import Testing

/// The backend's calls handled by ``BackendCore`` alone: no actor, no clock (each call names its
/// instant), no store or journal (the records come back to be looked at), and a seeded source of
/// randomness, so that what a call keeps, tells and answers can be written down.
@Suite("The backend core: Identity Toolkit calls without actor, clock or store")
struct BackendCoreTests {
    let start = Date(timeIntervalSince1970: 1_700_000_000)
    let number = "+16505551234"

    func core(_ configure: (inout BackendConfiguration) -> Void = { _ in }) throws -> BackendCore { try CoreFixtures.core(configure) }

    /// Each record as the journal writes it.
    func lines(_ records: [BackendRecord]) throws -> [String] {
        try records.map { record throws(IdentityToolkitError) in try BackendJournal.text(record) }
    }

    func kinds(_ events: [BackendEvent]) -> [String] { events.map(\.kind) }

    /// A silent-push sign-in, call by call: the receipt the push carries (verifyClient), the code
    /// it unlocks (sendVerificationCode with the receipt and the push's secret), the sign-in with
    /// the code (signInWithPhoneNumber), as the SDK sends them (FirebaseAuth
    /// Sources/Swift/SystemService/AuthAppCredentialManager.swift, AuthProvider/PhoneAuthProvider.swift)
    /// and the Auth Emulator answers the last two (firebase-tools src/emulator/auth/operations.ts).
    func silentPushSignIn(seed: UInt64) throws -> (records: [String], events: [String], uid: String, isNewUser: Bool?) {
        var core = try core()
        var random = SeededRandom(seed: seed)
        var records: [BackendRecord] = []
        var events: [BackendEvent] = []
        func keep<T>(_ outcome: CoreOutcome<T>) throws -> T {
            records += outcome.records
            events += outcome.events
            return try outcome.answer.get()
        }
        let (_, receipt, secret, _) = try keep(core.handle(now: start, random: random) { core throws(IdentityToolkitError) in
            try core.issueAppCredential(VerifyClientRequest(appToken: String(repeating: "ab", count: 32), isSandbox: true))
        })
        random.skip()
        let session = try keep(core.handle(now: start.addingTimeInterval(1), random: random) { core throws(IdentityToolkitError) in
            try core.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: number, iosReceipt: receipt, iosSecret: secret),
                                          languageCode: nil)
        })
        let code = try #require(core.state.sessions[session.sessionInfo ?? ""]?.code)
        random.skip()
        let decision = try keep(core.handle(now: start.addingTimeInterval(30), random: random) { core throws(IdentityToolkitError) in
            try core.signInWithPhoneNumber(VerifyPhoneNumberRequest(sessionInfo: session.sessionInfo, code: code))
        })
        guard case .tokens(let grant, let answer) = decision else {
            Issue.record("the sign-in granted no tokens")
            return ([], [], "", nil)
        }
        #expect(grant.provider == .phone && grant.issuedAt == start.addingTimeInterval(30))
        let response = answer(SignedTokens(idToken: "signed later", refreshToken: grant.refreshToken, expiresIn: "3600"))
        return (try lines(records), kinds(events), grant.user.localId, response.isNewUser)
    }

    @Test("a silent-push sign-in keeps a receipt, a session and its SMS, then the spent session, the user and the sign-in; the same seed gives the same records")
    func silentPush() throws {
        let first = try silentPushSignIn(seed: 7)
        #expect(first.events == ["codeRequested", "smsSent", "signedIn"])
        #expect(first.isNewUser == true)
        let recordKinds = first.records.map { line in line.split(separator: "\"").dropFirst().first.map(String.init) ?? "" }
        #expect(recordKinds == ["receipt", "session", "sms", "sessionUsed", "user", "signedIn"], "\(first.records)")
        // Nothing but the instants and the seed decided them: no clock, no system randomness.
        let again = try silentPushSignIn(seed: 7)
        #expect(again.records == first.records && again.uid == first.uid)
        let other = try silentPushSignIn(seed: 8)
        #expect(other.uid != first.uid && other.records != first.records)
    }

    @Test("a wrong code is kept though the answer is INVALID_CODE; a refused app credential keeps nothing")
    func refusals() throws {
        var core = try core()
        let (_, receipt, secret, _) = try core.handle(now: start) { core throws(IdentityToolkitError) in
            try core.issueAppCredential(VerifyClientRequest(appToken: String(repeating: "cd", count: 32), isSandbox: false))
        }.answer.get()
        // The push's secret is what proves the app: a request with another is refused, and the
        // refusal is an event, never a record.
        let forged = core.handle(now: start) { core throws(IdentityToolkitError) in
            try core.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: number, iosReceipt: receipt, iosSecret: secret + "x"),
                                          languageCode: nil)
        }
        #expect(forged.records.isEmpty)
        #expect(kinds(forged.events) == ["rejected"])
        #expect(throws: IdentityToolkitError.self) { try forged.answer.get() }
        let session = try core.handle(now: start) { core throws(IdentityToolkitError) in
            try core.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: number, iosReceipt: receipt, iosSecret: secret), languageCode: nil)
        }.answer.get()
        let code = try #require(core.state.sessions[session.sessionInfo ?? ""]?.code)
        let wrong = core.handle(now: start) { core throws(IdentityToolkitError) in
            try core.signInWithPhoneNumber(VerifyPhoneNumberRequest(sessionInfo: session.sessionInfo, code: code == "000000" ? "111111" : "000000"))
        }
        #expect(try lines(wrong.records) == lines([BackendRecord.wrongCode(session: session.sessionInfo ?? "")]))
        guard case .failure(let error) = wrong.answer else {
            Issue.record("a wrong code signed in")
            return
        }
        #expect(error.code == .invalidCode)
        #expect(kinds(wrong.events) == ["rejected"])
    }

    @Test("the instant a call names decides expiry: the same code at its lifetime's end is SESSION_EXPIRED, a second before it signs in")
    func instants() throws {
        var core = try core { $0.testPhoneNumbers = [number: "123456"] }
        let session = try core.handle(now: start) { core throws(IdentityToolkitError) in
            try core.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: number), languageCode: nil)
        }.answer.get()
        let lifetime = core.configuration.codeLifetime
        var late = core
        let expired = late.handle(now: start.addingTimeInterval(lifetime)) { core throws(IdentityToolkitError) in
            try core.signInWithPhoneNumber(VerifyPhoneNumberRequest(sessionInfo: session.sessionInfo, code: "123456"))
        }
        guard case .failure(let error) = expired.answer else {
            Issue.record("an expired code signed in")
            return
        }
        #expect(error.code == .sessionExpired && expired.records.isEmpty)
        let inTime = core.handle(now: start.addingTimeInterval(lifetime - 1)) { core throws(IdentityToolkitError) in
            try core.signInWithPhoneNumber(VerifyPhoneNumberRequest(sessionInfo: session.sessionInfo, code: "123456"))
        }
        guard case .success(.tokens(let grant, _)) = inTime.answer else {
            Issue.record("a code in time did not sign in")
            return
        }
        #expect(grant.user.phoneNumber == number && grant.user.createdAt == start.addingTimeInterval(lifetime - 1))
    }

    @Test("a test phone number needs no app credential and sends no SMS; a real one without proof is MISSING_APP_CREDENTIAL")
    func testNumbers() throws {
        var core = try core { $0.testPhoneNumbers = ["+16505550000": "654321"] }
        let test = core.handle(now: start) { core throws(IdentityToolkitError) in
            try core.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: "+16505550000"), languageCode: nil)
        }
        #expect(kinds(test.events) == ["codeRequested"])
        #expect(try lines(test.records).count == 1 && core.state.outbox.isEmpty)
        let real = core.handle(now: start) { core throws(IdentityToolkitError) in
            try core.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: number), languageCode: nil)
        }
        guard case .failure(let error) = real.answer else {
            Issue.record("a code went out with no proof")
            return
        }
        #expect(error.code == .missingAppCredential && real.records.isEmpty)
    }

    /// The inspector's import of an accounts file (Users screen, `POST /api/v1/accounts.json`):
    /// unlike `batchCreate`, which keeps the users it can and lists the others
    /// (firebase-tools src/emulator/auth/operations.ts, batchCreate), it keeps all of them or none.
    @Test("an accounts file imports whole or not at all: a bad user, an ID twice, an ID that exists (without overwrite) keep nothing")
    func importAccountsAllOrNothing() throws {
        var core = try core()
        let ada = UserRecord(localId: "ada", email: "ada@example.com", displayName: "Ada")
        let grace = UserRecord(localId: "grace", email: "grace@example.com")
        func run(_ users: [UserRecord], overwrite: Bool) -> CoreOutcome<(imported: Int, replaced: Int)> {
            core.handle(now: start) { core throws(IdentityToolkitError) in try core.importAccounts(users, overwrite: overwrite) }
        }
        let first = run([ada, grace], overwrite: false)
        #expect(try first.answer.get() == (2, 0))
        #expect(first.records.count == 2 && core.state.projectUsers.byID.keys.sorted() == ["ada", "grace"])

        let bad = UserRecord(localId: "lin", email: "not an email")
        let refused = run([UserRecord(localId: "new", email: "new@example.com"), bad], overwrite: true)
        #expect(refused.records.isEmpty && core.state.projectUsers.byID["new"] == nil)
        #expect(throws: IdentityToolkitError.self) { try refused.answer.get() }
        if case .failure(let error) = refused.answer { #expect(error.message.contains("user 1 (lin)") && error.message.contains("nothing was imported"), "\(error.message)") }

        let existing = run([ada], overwrite: false)
        if case .failure(let error) = existing.answer {
            #expect(error.code == .duplicateLocalID && error.message.contains("ada exists"), "\(error.message)")
        } else { Issue.record("an existing ID imported without overwrite") }
        #expect(existing.records.isEmpty)

        let twice = run([grace, grace], overwrite: true)
        if case .failure(let error) = twice.answer { #expect(error.code == .duplicateLocalID && error.message.contains("grace")) } else { Issue.record("an ID twice imported") }

        // Two users of one file may not share an email: checked against the file's earlier users.
        let clash = run([UserRecord(localId: "x1", email: "same@example.com"), UserRecord(localId: "x2", email: "same@example.com")], overwrite: false)
        #expect(clash.records.isEmpty && core.state.projectUsers.byID["x1"] == nil)

        var renamed = ada
        renamed.displayName = "Ada King"
        let replaced = run([renamed], overwrite: true)
        #expect(try replaced.answer.get() == (1, 1) && core.state.projectUsers.byID["ada"]?.displayName == "Ada King")
        #expect(throws: IdentityToolkitError.self) { try run([], overwrite: true).answer.get() }
    }
}

extension BackendCoreTests {
    /// Phone multi-factor, call by call, as firebase-tools `operations.ts` (`mfaEnrollmentStart` …
    /// `mfaSignInFinalize`) answers it: a password user with a verified email enrolls a test
    /// number, then a password sign-in answers a pending credential, which is good for its
    /// lifetime from the instant it was issued (the end included, as every proof's here), and no longer.
    @Test("a password's salt is the call's randomness: the same seed gives the same salt, hash and user record; another seed another")
    func passwordSalt() async throws {
        var core = try core()
        func salt(_ seed: UInt64) -> [UInt8] {
            (try? core.handle(now: start, random: SeededRandom(seed: seed)) { core throws(IdentityToolkitError) in core.passwordSalt() }.answer.get()) ?? []
        }
        #expect(salt(7).count == 16 && salt(7) == salt(7) && salt(7) != salt(8))
        let first = await PasswordHashing.hash("correct horse", salt: salt(7))
        let again = await PasswordHashing.hash("correct horse", salt: salt(7))
        #expect(first.hash == again.hash && first.salt == again.salt && first.hash.hasPrefix(PasswordHashing.prefix))
        #expect(await PasswordHashing.matches("correct horse", hash: first.hash, salt: first.salt))
        #expect(await !PasswordHashing.matches("wrong horse", hash: first.hash, salt: first.salt))
        func signUp(_ hash: PasswordHash) throws -> [String] {
            var fresh = try self.core()
            return try lines(fresh.handle(now: start, random: SeededRandom(seed: 1)) { core throws(IdentityToolkitError) in
                try core.signUp(SignUpNewUserRequest(email: "ada@example.com", password: "correct horse"), hash: hash)
            }.records)
        }
        #expect(try signUp(first) == signUp(again), "the same seed, the same records")
    }

    /// firebase-tools `operations.ts` `sendOobCode` (EMAIL_SIGNIN) and `signInWithEmailLink`.
    @Test("email link: the code signs its address in once (a new, verified user), within its hour; another address is INVALID_EMAIL and spends nothing; with an ID token the email is linked")
    func emailLink() throws {
        var core = try core()
        core.emulatorSignIn.enableImprovedEmailPrivacy = false
        func link(to email: String, at instant: Date) throws -> String {
            let request = GetOOBConfirmationCodeRequest(requestType: .emailSignIn, email: email)
            _ = try core.handle(now: instant) { core throws(IdentityToolkitError) in
                try core.sendOobCode(request, type: try core.oobRequestType(request))
            }.answer.get()
            let sent = try #require(core.state.emailOutbox.last)
            #expect(sent.requestType == .emailSignIn && sent.link.contains("mode=signIn"))
            return sent.code
        }
        func signIn(_ request: EmailLinkSignInRequest, at instant: Date) -> CoreOutcome<SignInDecision<EmailLinkSignInResponse>> {
            core.handle(now: instant) { core throws(IdentityToolkitError) in try core.signInWithEmailLink(request) }
        }
        let code = try link(to: "ada@example.com", at: start)
        let wrong = signIn(EmailLinkSignInRequest(email: "bob@example.com", oobCode: code), at: start)
        #expect(wrong.answer.errorCode == .invalidEmail && wrong.records.isEmpty)
        let first = signIn(EmailLinkSignInRequest(email: "ADA@example.com", oobCode: code), at: start.addingTimeInterval(3599))
        guard case .tokens(let grant, _)? = try? first.answer.get() else { Issue.record("no tokens: \(first.answer)"); return }
        #expect(grant.user.email == "ada@example.com" && grant.user.emailVerified == true && grant.user.emailLinkSignin == true)
        #expect(grant.provider == .password && kinds(first.events) == ["accountSignIn"])
        #expect(try lines(first.records).contains { $0.contains("oobCodeUsed") }, "the code is spent")
        #expect(signIn(EmailLinkSignInRequest(email: "ada@example.com", oobCode: code), at: start).answer.errorCode == .init(rawValue: "INVALID_OOB_CODE"))
        let late = try link(to: "ada@example.com", at: start)
        #expect(signIn(EmailLinkSignInRequest(email: "ada@example.com", oobCode: late), at: start.addingTimeInterval(3600)).answer.errorCode
                == .init(rawValue: "EXPIRED_OOB_CODE"))
        let methods = try core.handle(now: start) { core throws(IdentityToolkitError) in
            try core.createAuthUri(CreateAuthURIRequest(identifier: "ada@example.com", continueUri: "http://www.google.com/"))
        }.answer.get()
        #expect(methods.signinMethods == ["emailLink"] && methods.allProviders == ["password"])

        // Linking: an anonymous user's ID token takes the email; an email another user holds is EMAIL_EXISTS.
        let anonymous = try core.handle(now: start) { core throws(IdentityToolkitError) in try core.signUp(SignUpNewUserRequest(), hash: nil) }.answer.get()
        guard case .tokens(let anonymousGrant, _) = anonymous else { Issue.record("no anonymous user"); return }
        let idToken = core.tokenSigner.token(for: anonymousGrant.user, provider: .anonymous, secondFactor: nil, authTime: start, extraClaims: [:], now: start)
        let taken = signIn(EmailLinkSignInRequest(email: "ada@example.com", oobCode: try link(to: "ada@example.com", at: start), idToken: idToken), at: start)
        #expect(taken.answer.errorCode == .emailExists)
        let linked = signIn(EmailLinkSignInRequest(email: "lin@example.com", oobCode: try link(to: "lin@example.com", at: start), idToken: idToken), at: start)
        guard case .tokens(let linkedGrant, let answer)? = try? linked.answer.get() else { Issue.record("not linked: \(linked.answer)"); return }
        #expect(linkedGrant.user.localId == anonymousGrant.user.localId && linkedGrant.user.email == "lin@example.com")
        #expect(answer(SignedTokens(idToken: "i", refreshToken: "r", expiresIn: "3600")).isNewUser == false)
    }

    @Test("multi-factor: enroll, then a pending credential good through its lifetime, refused with its cause a second after")
    func multiFactor() throws {
        let enrolled = try CoreFixtures.enrolledUser()
        #expect(kinds(enrolled.finished.events) == ["secondFactorEnrolled"])
        var core = enrolled.core
        let (enrollment, hash) = (enrolled.enrollment, CoreFixtures.hash)

        let issued = start.addingTimeInterval(10)
        let first = try core.handle(now: issued) { core throws(IdentityToolkitError) in
            try core.signInWithPassword(email: "ada@example.com", verifiedHash: hash.hash, tenant: nil)
        }.answer.get()
        guard case .answer(let response) = first, let pending = response.mfaPendingCredential else {
            Issue.record("a user with a second factor got a session from the password alone")
            return
        }
        let lifetime = core.configuration.mfaPendingCredentialLifetime
        func secondFactorCode(at instant: Date) -> CoreOutcome<StartMFASignInResponse> {
            var copy = core
            return copy.handle(now: instant) { core throws(IdentityToolkitError) in
                try core.startMFASignIn(StartMFASignInRequest(mfaPendingCredential: pending, mfaEnrollmentId: enrollment.id,
                                                              phoneSignInInfo: StartMFAPhoneRequestInfo(phoneNumber: nil)))
            }
        }
        let late = secondFactorCode(at: issued.addingTimeInterval(lifetime + 1))
        #expect(late.records.isEmpty)
        #expect(late.events.first?.refusal?.cause == .pendingCredentialExpired, "\(late.events)")
        let inTime = secondFactorCode(at: issued.addingTimeInterval(lifetime))
        #expect(try inTime.answer.get().phoneResponseInfo?.sessionInfo?.isEmpty == false)
    }
}

/// SplitMix64: the same seed, the same bytes.
struct SeededRandom: BackendRandom {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Moves on, so that the next call draws other bytes than the last (a call's source is a copy).
    mutating func skip() { state &+= 0x1234_5678 }

    mutating func bytes(_ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            withUnsafeBytes(of: next()) { out += $0.prefix(count - out.count) }
        }
        return out
    }

}

extension Result where Failure == IdentityToolkitError {
    /// The refusal's code; nil for an answer.
    var errorCode: IdentityToolkitError.Code? {
        if case .failure(let error) = self { error.code } else { nil }
    }
}
