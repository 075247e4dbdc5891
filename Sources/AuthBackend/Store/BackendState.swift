import IdentityToolkitAPI
import Utilities
import Crypto
import CryptoExtras
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One change to the backend's state. Every change goes through ``BackendState/apply(_:)``, live
/// and when the journal is replayed after a restart, so both see the same state.
enum BackendRecord: Codable, Sendable {
    /// verifyClient issued an app credential (the secret is kept as its SHA-256), starting a
    /// sign-in (``SignInID``; nil in journals from before sign-ins had IDs, as in the records below)
    /// that waits for its code request (`answered` true in a compacted journal once it came).
    case receipt(id: String, secretSHA256: String, appToken: String, issuedAt: Date, signIn: SignInID? = nil, answered: Bool? = nil)
    /// sendVerificationCode (or a multi-factor start) opened a session (the verification ID) with
    /// this code; `purpose` nil for a first factor; `tenant` the tenant whose user it signs in.
    case session(id: String, phoneNumber: String, code: String, createdAt: Date, purpose: SessionPurpose? = nil, signIn: SignInID? = nil,
                 tenant: String? = nil)
    case wrongCode(session: String)
    /// The right code was typed: the session is spent, and forgotten (the emulator deletes a
    /// verification code once used: firebase-tools src/emulator/auth/operations.ts,
    /// `verifyPhoneNumber`), so that what a sign-in leaves does not wait for the code's lifetime.
    case sessionUsed(session: String)
    /// A solved reCAPTCHA challenge's token, by SHA-256.
    case recaptcha(digest: String, eventID: String, issuedAt: Date, signIn: SignInID? = nil)
    case recaptchaUsed(digest: String)
    case sms(SMSMessage)
    /// A user, new or changed, in its tenant's directory (``BackendUser``'s `tenantId`).
    case user(BackendUser)
    case userDeleted(localId: String, tenant: String? = nil)
    /// An Apple identity token that signed in (each does once), by SHA-256.
    case appleTokenSpent(digest: String, at: Date)
    /// An Apple ID linked to another account: a single-use pending token to sign in with instead.
    case applePending(token: String, sub: String, email: String?, at: Date, tenant: String? = nil)
    case applePendingUsed(token: String)
    /// An Apple authorization code (by SHA-256) was revoked: it cannot be revoked again.
    case appleCodeRevoked(digest: String, at: Date)
    /// An Apple user (`sub`) consented to an app (`clientID`; name and email came with it), or the
    /// grant ended (revoked: the next consent is a first one again).
    case appleConsent(sub: String, clientID: String, granted: Bool)
    /// A refresh token kept by SHA-256, for what sign-in (`claims`: a custom token's, a JSON object
    /// as text). Journals written before refresh tokens were sealed (``RefreshTokenSeal``) hold
    /// them; they keep working, and no new one is written.
    case refreshToken(digest: String, localId: String, provider: ProviderID, secondFactor: String?, issuedAt: Date, claims: String? = nil)
    /// A user signed in (its `lastLoginAt`); the refresh token carries the rest, sealed.
    case signedIn(localId: String, at: Date, tenant: String? = nil)
    /// A first factor of a user with a second factor: the pending credential (by SHA-256) that a
    /// second factor turns into a session, once.
    case mfaPending(digest: String, localId: String, provider: ProviderID, at: Date, signIn: SignInID? = nil, tenant: String? = nil)
    case mfaPendingUsed(digest: String)
    /// Linking a number another account holds: a proof (by SHA-256) that the user verified it,
    /// which signs in to that account once.
    case temporaryProof(digest: String, phoneNumber: String, at: Date, tenant: String? = nil)
    case temporaryProofUsed(digest: String)
    /// The simulated reCAPTCHA Enterprise service issued a token (by SHA-256) for an action.
    case enterpriseToken(digest: String, action: String, issuedAt: Date)
    case enterpriseTokenUsed(digest: String)
    /// Every user of the project (or of `tenant`) went (the emulator's `DELETE …/accounts`), with
    /// their refresh tokens and pending credentials.
    case accountsReset(tenant: String? = nil)
    /// A tenant made or changed (its whole configuration; its users stay).
    case tenant(id: String, TenantConfig)
    /// A tenant deleted, with every user of it.
    case tenantDeleted(id: String)
    /// The project config a node changed at run time, for the whole fleet (written with a shared store only).
    case projectConfig(SharedProjectConfig)
    /// A TOTP enrollment started (`mfaEnrollment:start` with `totpEnrollmentInfo`): its session (by
    /// SHA-256), whose user it is and the secret their app was given.
    case totpSession(digest: String, localId: String, secret: String, createdAt: Date, tenant: String? = nil)
    case totpSessionUsed(digest: String)
    /// An email with a single-use code (password reset, email verification), by the code's SHA-256.
    case oobCode(digest: String, OobEmail)
    case oobCodeUsed(digest: String)
    /// What became of a silent push a node sent, so that any node's `…/silentPushes` lists it
    /// (written with a shared store only; one node keeps its list in memory).
    case silentPush(SilentPushRecord)
}

/// What a code session is for: a first factor (nil), enrolling a phone as a second factor, or a
/// second factor completing a sign-in. A code sent for one cannot be spent on another.
enum SessionPurpose: Codable, Sendable, Hashable {
    case mfaEnrollment(localId: String)
    case mfaSignIn(pendingDigest: String, enrollmentID: String)

    /// Sessions are re-entrant per number and purpose: this is the purpose's part of the key.
    var key: String {
        switch self {
        case .mfaEnrollment(let localId): "enroll:\(localId)"
        case .mfaSignIn(let pending, let enrollment): "signIn:\(pending):\(enrollment)"
        }
    }
}

/// One pool of users: the project's own, or one tenant's. Each tenant's users are apart, as in
/// Identity Platform and the Auth Emulator (`TenantProjectState`): the same UID, email or number
/// can be in two of them. Its tables change only here: through ``put(_:)``, ``remove(_:)`` and
/// the rows a fleet node loads (``loadRow(_:_:_:)``), which keep the indexes in step with the users.
struct UserDirectory {
    private(set) var byID: StateTable<String, BackendUser>
    /// Users by lower-cased email (at most one user has each).
    private(set) var idByEmail: StateTable<String, String>
    private(set) var idByPhone: StateTable<String, String>
    private(set) var idByAppleSub: StateTable<String, String>
    /// Users by another provider's ID (`providerId|rawId` of `otherProviders`: Google, Facebook, …).
    private(set) var idByProviderID: StateTable<String, String>

    /// The users of `tenant` (nil: the project's own); `reads` notes what a fleet node's state lacks.
    init(tenant: String? = nil, reads: StateReads? = nil) {
        let scope = tenant ?? ""
        byID = StateTable(.users, scope: scope, reads: reads)
        idByEmail = StateTable(.idByEmail, scope: scope, reads: reads)
        idByPhone = StateTable(.idByPhone, scope: scope, reads: reads)
        idByAppleSub = StateTable(.idByAppleSub, scope: scope, reads: reads)
        idByProviderID = StateTable(.idByProviderID, scope: scope, reads: reads)
    }

    var count: Int { byID.count }

    private static func providerKey(_ providerId: ProviderID, _ rawId: String) -> String { "\(providerId.rawValue)|\(rawId)" }

    /// Puts `user` in, in place of the one with its UID, with its email, number and Apple ID.
    mutating func put(_ user: BackendUser) {
        if let old = byID[user.localId] { unindex(old) }
        byID[user.localId] = user
        if let phone = user.phoneNumber { idByPhone[phone] = user.localId }
        if let sub = user.appleSub { idByAppleSub[sub] = user.localId }
        if let email = user.email?.lowercased() { idByEmail[email] = user.localId }
        for provider in user.otherProviders ?? [] {
            if let rawId = provider.rawId { idByProviderID[Self.providerKey(provider.providerId, rawId)] = user.localId }
        }
    }

    mutating func remove(_ localId: String) {
        if let old = byID.removeValue(forKey: localId) { unindex(old) }
    }

    /// Every user removed, with the indexes.
    mutating func removeAll() {
        byID.removeAll()
        idByEmail.removeAll()
        idByPhone.removeAll()
        idByAppleSub.removeAll()
        idByProviderID.removeAll()
    }

    private mutating func unindex(_ old: BackendUser) {
        if let phone = old.phoneNumber, idByPhone[phone] == old.localId { idByPhone[phone] = nil }
        if let sub = old.appleSub, idByAppleSub[sub] == old.localId { idByAppleSub[sub] = nil }
        if let email = old.email?.lowercased(), idByEmail[email] == old.localId { idByEmail[email] = nil }
        for provider in old.otherProviders ?? [] {
            guard let rawId = provider.rawId else { continue }
            let key = Self.providerKey(provider.providerId, rawId)
            if idByProviderID[key] == old.localId { idByProviderID[key] = nil }
        }
    }

    /// A sign-in of `localId` at `at`: its `lastLoginAt`, if it is the latest. Changed in place: no
    /// indexed field changes, so nothing is unindexed and indexed again as ``put(_:)`` would.
    mutating func signedIn(_ localId: String, at: Date) {
        if let last = byID[localId]?.lastLoginAt, last >= at { return }
        byID[localId]?.lastLoginAt = at
    }

    /// The changes so far are written (a fleet node put them in the store): none from here on.
    mutating func forgetChanges() {
        byID.forgetChanges()
        idByEmail.forgetChanges()
        idByPhone.forgetChanges()
        idByAppleSub.forgetChanges()
        idByProviderID.forgetChanges()
    }

    /// A row of one of the tables as a fleet node loads it from the store (nil text: removed).
    mutating func loadRow(_ table: StateTableName, _ key: String, _ text: String?) throws(IdentityToolkitError) {
        switch table {
        case .users: try byID.loadRow(key, text)
        case .idByEmail: try idByEmail.loadRow(key, text)
        case .idByPhone: try idByPhone.loadRow(key, text)
        case .idByAppleSub: try idByAppleSub.loadRow(key, text)
        default: try idByProviderID.loadRow(key, text)
        }
    }

    /// The user with this email (emails are compared lower-cased; at most one user has each).
    func user(email: String) -> BackendUser? {
        idByEmail[email.lowercased()].flatMap { byID[$0] }
    }

    /// The user holding `rawId` at `providerId`.
    func user(provider providerId: ProviderID, rawId: String) -> BackendUser? {
        switch providerId {
        case .phone: return idByPhone[rawId].flatMap { byID[$0] }
        case .apple: return idByAppleSub[rawId].flatMap { byID[$0] }
        default: return idByProviderID[Self.providerKey(providerId, rawId)].flatMap { byID[$0] }
        }
    }
}

/// What the backend knows, in memory: users, app credentials, sessions, reCAPTCHA tokens, SMS.
struct BackendState {
    // The tables' rows: what a fleet's store keeps of each, as JSON (``BackendState/row(_:)``).
    struct Receipt: Codable {
        let secretSHA256: String
        let appToken: String
        let issuedAt: Date
        var signIn: SignInID?
    }
    struct Session: Hashable, Codable {
        let phoneNumber: String
        let code: String
        let createdAt: Date
        var purpose: SessionPurpose?
        var signIn: SignInID?
        var tenant: String?
        var attempts = 0
    }
    struct RefreshToken: Codable {
        let localId: String
        let provider: ProviderID
        let secondFactor: String?
        /// The sign-in: every ID token it refreshes keeps this `auth_time`.
        let issuedAt: Date
        var claims: String? = nil
    }
    struct MFAPending: Codable {
        let localId: String
        let provider: ProviderID
        let at: Date
        var signIn: SignInID?
        var tenant: String?
        var used = false
    }
    struct RecaptchaToken: Codable {
        let eventID: String
        let issuedAt: Date
        var signIn: SignInID?
        var used = false
    }
    struct Pending: Codable {
        let sub: String
        let email: String?
        let at: Date
        var tenant: String?
    }
    struct TemporaryProof: Codable {
        var phoneNumber: String
        var at: Date
        var used: Bool
        var tenant: String?
    }
    struct EnterpriseToken: Codable {
        var action: String
        var issuedAt: Date
        var used: Bool
    }
    struct OobCode: Codable {
        var message: OobEmail
        var used: Bool
    }
    struct TOTPSession: Codable {
        var localId: String
        var secret: String
        var createdAt: Date
        var tenant: String?
    }
    /// What a fleet node's state lacks, noted by its tables (nil outside a fleet).
    let reads: StateReads?
    var receipts: StateTable<String, Receipt>
    /// The sign-ins whose silent push went out and that have asked for no code yet, and when the
    /// push went: a reCAPTCHA fallback's token continues the one of them there is (``BackendCore/issueRecaptchaToken(eventID:)``).
    var awaitingCode: StateTable<SignInID, Date>
    var sessions: StateTable<String, Session>
    /// The newest session of each number and purpose (``sessionKey(_:_:)``): sendVerificationCode is
    /// re-entrant per number.
    var latestSession: StateTable<String, String>
    /// Refresh tokens and multi-factor pending credentials, by SHA-256.
    var refreshTokens: StateTable<String, RefreshToken>
    var mfaPending: StateTable<String, MFAPending>
    /// Temporary proofs of numbers, by SHA-256: the number, when, and whether spent.
    var temporaryProofs: StateTable<String, TemporaryProof>
    /// reCAPTCHA Enterprise tokens, by SHA-256: their action, when, whether assessed.
    var enterpriseTokens: StateTable<String, EnterpriseToken>
    /// Keyed by the token's SHA-256: an O(1) lookup whose timing says nothing about the token.
    var recaptchaTokens: StateTable<String, RecaptchaToken>
    var outbox: [SMSMessage] = []
    /// The emails' codes, by SHA-256, and the emails in the order they went.
    var oobCodes: StateTable<String, OobCode>
    var emailOutbox: [OobEmail] = []
    /// TOTP enrollments started and not finished, by their session's SHA-256.
    var totpSessions: StateTable<String, TOTPSession>
    /// The project's own users.
    var projectUsers: UserDirectory
    /// The tenants' configurations, by ID.
    var tenants: StateTable<String, TenantConfig>
    /// The tenants' users, by tenant ID (a tenant's record comes before its users' in a journal,
    /// but a journal cut short must still read).
    var tenantUsers: [String: UserDirectory] = [:]
    var spentAppleTokens: StateTable<String, Date>
    var pendingAppleTokens: StateTable<String, Pending>
    /// Revoked Apple authorization codes, by SHA-256 (kept: a code does not expire here).
    var revokedAppleCodes: StateTable<String, Date>
    /// The simulated Apple's grants, `sub|clientID` (kept until revoked, as Apple keeps them).
    var appleConsents: StateTable<String, Bool>
    /// The fleet's project config, once a node changed it (a shared store's record), by ``sharedConfigKey``.
    var sharedConfig: StateTable<String, SharedProjectConfig>
    static let sharedConfigKey = "project"
    var projectConfig: SharedProjectConfig? { sharedConfig[Self.sharedConfigKey] }
    /// The fleet's latest silent pushes, at most ``silentPushLimit`` (a shared store's records):
    /// a list in a journal's state, rows by receipt in a fleet node's (``silentPushRows``).
    var fleetSilentPushes = RecentItems<SilentPushRecord>(capacity: silentPushLimit)
    var silentPushRows: StateTable<String, SilentPushRecord>
    static let silentPushLimit = 1000
    /// A fleet node's SMS outbox, as rows (a journal's state keeps ``outbox``, a list).
    var smsRows: StateTable<String, SMSMessage>

    /// An empty state; `reads` (a fleet node's) notes what its tables lack.
    init(reads: StateReads? = nil) {
        self.reads = reads
        receipts = StateTable(.receipts, reads: reads)
        awaitingCode = StateTable(.awaitingCode, reads: reads)
        sessions = StateTable(.sessions, reads: reads)
        latestSession = StateTable(.latestSession, reads: reads)
        refreshTokens = StateTable(.refreshTokens, reads: reads)
        mfaPending = StateTable(.mfaPending, reads: reads)
        temporaryProofs = StateTable(.temporaryProofs, reads: reads)
        enterpriseTokens = StateTable(.enterpriseTokens, reads: reads)
        recaptchaTokens = StateTable(.recaptchaTokens, reads: reads)
        oobCodes = StateTable(.oobCodes, reads: reads)
        totpSessions = StateTable(.totpSessions, reads: reads)
        projectUsers = UserDirectory(reads: reads)
        tenants = StateTable(.tenants, reads: reads)
        spentAppleTokens = StateTable(.spentAppleTokens, reads: reads)
        pendingAppleTokens = StateTable(.pendingAppleTokens, reads: reads)
        revokedAppleCodes = StateTable(.revokedAppleCodes, reads: reads)
        appleConsents = StateTable(.appleConsents, reads: reads)
        sharedConfig = StateTable(.sharedConfig, reads: reads)
        silentPushRows = StateTable(.silentPushes, reads: reads)
        smsRows = StateTable(.sms, reads: reads)
    }

    /// The SMS sent, oldest first: the outbox's list, or a fleet node's rows.
    var outboxMessages: [SMSMessage] {
        guard reads != nil else { return outbox }
        return smsRows.values.sorted { ($0.sentAt, $0.sessionInfo, $0.code) < ($1.sentAt, $1.sessionInfo, $1.code) }
    }

    /// The emails sent, oldest first: the outbox's list, or a fleet node's codes.
    var emailOutboxMessages: [OobEmail] {
        guard reads != nil else { return emailOutbox }
        return oobCodes.values.map(\.message).sorted { ($0.sentAt, $0.code) < ($1.sentAt, $1.code) }
    }

    /// The latest silent pushes, oldest first (a fleet's records).
    var silentPushList: [SilentPushRecord] {
        guard reads != nil else { return fleetSilentPushes.all }
        return Array(silentPushRows.values.sorted { ($0.at, $0.receipt) < ($1.at, $1.receipt) }.suffix(Self.silentPushLimit))
    }

    /// An SMS's row key: its session and instant (a session's code may be sent again).
    static func smsKey(_ message: SMSMessage) -> String { "\(message.sessionInfo)@\(message.sentAt.timeIntervalSince1970)" }

    /// The users of `tenant` (nil: the project's own); none for a tenant not made yet.
    func users(in tenant: String?) -> UserDirectory {
        guard let tenant else { return projectUsers }
        return tenantUsers[tenant] ?? UserDirectory(tenant: tenant, reads: reads)
    }

    /// Every user, oldest first (what the inspector and the admin's lists show).
    var usersOldestFirst: [BackendUser] { allUsers.sorted { $0.createdAt < $1.createdAt } }

    /// Every user, the project's then each tenant's (in the order of the tenants' IDs).
    var allUsers: [BackendUser] {
        Array(projectUsers.byID.values) + tenants.keys.sorted().flatMap { users(in: $0).byID.values }
    }

    /// How many users there are, in the project and its tenants.
    var userCount: Int { tenants.keys.reduce(projectUsers.count) { $0 + users(in: $1).count } }

    /// Changes the users of `tenant` in place (a tenant not made yet is made with the Auth
    /// Emulator's defaults: a record of a tenant's user comes after its tenant's record, but a
    /// journal cut short must still read).
    private mutating func changeUsers(in tenant: String?, _ change: (inout UserDirectory) -> Void) {
        guard let tenant else { return change(&projectUsers) }
        if tenants[tenant] == nil { tenants[tenant] = .implicit }
        change(&tenantUsers[tenant, default: UserDirectory(tenant: tenant, reads: reads)])
    }

    mutating func apply(_ record: BackendRecord) {
        switch record {
        case .receipt(let id, let secret, let appToken, let issuedAt, let signIn, let answered):
            receipts[id] = Receipt(secretSHA256: secret, appToken: appToken, issuedAt: issuedAt, signIn: signIn)
            if let signIn, answered != true { awaitingCode[signIn] = issuedAt }
        case .session(let id, let phoneNumber, let code, let createdAt, let purpose, let signIn, let tenant):
            sessions[id] = Session(phoneNumber: phoneNumber, code: code, createdAt: createdAt, purpose: purpose, signIn: signIn, tenant: tenant)
            latestSession[Self.sessionKey(phoneNumber, purpose)] = id
            if let signIn { awaitingCode[signIn] = nil }
        case .wrongCode(let id):
            sessions[id]?.attempts += 1
        case .sessionUsed(let id):
            // A spent session answers as an unknown one (INVALID_SESSION_INFO), so it is dropped.
            if let spent = sessions.removeValue(forKey: id) {
                let key = Self.sessionKey(spent.phoneNumber, spent.purpose)
                if latestSession[key] == id { latestSession[key] = nil }
            }
        case .recaptcha(let digest, let eventID, let issuedAt, let signIn):
            recaptchaTokens[digest] = RecaptchaToken(eventID: eventID, issuedAt: issuedAt, signIn: signIn)
        case .recaptchaUsed(let digest):
            recaptchaTokens[digest]?.used = true
        case .sms(let message):
            if reads == nil { outbox.append(message) } else { smsRows[Self.smsKey(message)] = message }
        case .user(let user):
            changeUsers(in: user.tenantId) { $0.put(user) }
        case .userDeleted(let localId, let tenant):
            changeUsers(in: tenant) { $0.remove(localId) }
            // Kept refresh tokens (from journals before they were sealed) are the project's.
            if tenant == nil, !refreshTokens.isEmpty { refreshTokens = refreshTokens.filter { $0.value.localId != localId } }
        case .appleTokenSpent(let digest, let at):
            spentAppleTokens[digest] = at
        case .applePending(let token, let sub, let email, let at, let tenant):
            pendingAppleTokens[token] = Pending(sub: sub, email: email, at: at, tenant: tenant)
        case .appleCodeRevoked(let digest, let at):
            revokedAppleCodes[digest] = at
        case .appleConsent(let sub, let clientID, let granted):
            if granted { appleConsents.insert(Self.consentKey(sub, clientID)) } else { appleConsents.remove(Self.consentKey(sub, clientID)) }
        case .applePendingUsed(let token):
            pendingAppleTokens[token] = nil
        case .refreshToken(let digest, let localId, let provider, let secondFactor, let issuedAt, let claims):
            refreshTokens[digest] = RefreshToken(localId: localId, provider: provider, secondFactor: secondFactor, issuedAt: issuedAt,
                                                 claims: claims)
            // A sign-in: the user's last one (a compacted journal lists tokens in any order).
            signedIn(localId, at: issuedAt, tenant: nil)
        case .signedIn(let localId, let at, let tenant):
            signedIn(localId, at: at, tenant: tenant)
        case .mfaPending(let digest, let localId, let provider, let at, let signIn, let tenant):
            mfaPending[digest] = MFAPending(localId: localId, provider: provider, at: at, signIn: signIn, tenant: tenant)
        case .mfaPendingUsed(let digest):
            mfaPending[digest]?.used = true
        case .temporaryProof(let digest, let phoneNumber, let at, let tenant):
            temporaryProofs[digest] = TemporaryProof(phoneNumber: phoneNumber, at: at, used: false, tenant: tenant)
        case .temporaryProofUsed(let digest):
            temporaryProofs[digest]?.used = true
        case .enterpriseToken(let digest, let action, let issuedAt):
            enterpriseTokens[digest] = EnterpriseToken(action: action, issuedAt: issuedAt, used: false)
        case .enterpriseTokenUsed(let digest):
            enterpriseTokens[digest]?.used = true
        case .accountsReset(let tenant):
            changeUsers(in: tenant) { $0.removeAll() }
            mfaPending = mfaPending.filter { $0.value.tenant != tenant }
            pendingAppleTokens = pendingAppleTokens.filter { $0.value.tenant != tenant }
            temporaryProofs = temporaryProofs.filter { $0.value.tenant != tenant }
            if tenant == nil { refreshTokens.removeAll() }
        case .tenant(let id, let config):
            tenants[id] = config
        case .tenantDeleted(let id):
            tenants[id] = nil
            if reads == nil {
                tenantUsers[id] = nil
            } else {
                // Each user's rows go, as changes a fleet node writes.
                var users = users(in: id)
                users.removeAll()
                tenantUsers[id] = users
            }
            mfaPending = mfaPending.filter { $0.value.tenant != id }
            pendingAppleTokens = pendingAppleTokens.filter { $0.value.tenant != id }
            temporaryProofs = temporaryProofs.filter { $0.value.tenant != id }
        case .projectConfig(let config):
            sharedConfig[Self.sharedConfigKey] = config
        case .silentPush(let push):
            if reads == nil { fleetSilentPushes.append(push) } else { silentPushRows[push.receipt] = push }
        case .oobCode(let digest, let message):
            oobCodes[digest] = OobCode(message: message, used: false)
            if reads == nil { emailOutbox.append(message) }
        case .oobCodeUsed(let digest):
            oobCodes[digest]?.used = true
        case .totpSession(let digest, let localId, let secret, let createdAt, let tenant):
            totpSessions[digest] = TOTPSession(localId: localId, secret: secret, createdAt: createdAt, tenant: tenant)
        case .totpSessionUsed(let digest):
            totpSessions[digest] = nil
        }
    }

    /// A sign-in of `localId` at `at`, in its tenant's users.
    private mutating func signedIn(_ localId: String, at: Date, tenant: String?) {
        changeUsers(in: tenant) { $0.signedIn(localId, at: at) }
    }

    /// The key of ``appleConsents``.
    static func consentKey(_ sub: String, _ clientID: String) -> String { "\(sub)|\(clientID)" }

    /// The key of ``latestSession``: the number, and the purpose when it is not a first factor.
    static func sessionKey(_ phoneNumber: String, _ purpose: SessionPurpose?) -> String {
        purpose.map { "\($0.key)|\(phoneNumber)" } ?? phoneNumber
    }

    /// Forgets what can no longer change an answer: sessions, credentials, tokens and the outboxes'
    /// messages once their lifetime and ``BackendConfiguration/expiredRetention`` are over (until
    /// then their own errors, SESSION_EXPIRED and so on, still come back); SMS a day while a quota
    /// counts them. What a sign-in leaves behind is therefore bounded by the sign-ins of that
    /// window, not by all sign-ins ever (`Tests/chaos.sh --long` measures it).
    mutating func purge(now: Date, configuration: BackendConfiguration) {
        let keep = configuration.expiredRetention
        func fresh(_ at: Date, _ lifetime: TimeInterval) -> Bool { now.timeIntervalSince(at) < lifetime + keep }
        receipts = receipts.filter { fresh($0.value.issuedAt, configuration.receiptLifetime) }
        awaitingCode = awaitingCode.filter { now.timeIntervalSince($0.value) <= BackendCore.fallbackWindow }
        sessions = sessions.filter { fresh($0.value.createdAt, configuration.codeLifetime) }
        latestSession = latestSession.filter { sessions[$0.value] != nil }
        recaptchaTokens = recaptchaTokens.filter { fresh($0.value.issuedAt, configuration.recaptchaTokenLifetime) }
        let quotas = configuration.smsPerNumberPerDay != nil || configuration.smsPerProjectPerDay != nil
        // filter, not removeAll(where:): a new array sized to what is left, where removeAll keeps
        // the capacity of the busiest moment for good.
        outbox = outbox.filter { fresh($0.sentAt, quotas ? 86_400 : configuration.codeLifetime) }
        spentAppleTokens = spentAppleTokens.filter { fresh($0.value, AppleIDProvider.tokenLifetime) }
        // Rare (an Apple ID another account holds): a day, as before any retention was set.
        pendingAppleTokens = pendingAppleTokens.filter { now.timeIntervalSince($0.value.at) < 86_400 }
        mfaPending = mfaPending.filter { fresh($0.value.at, configuration.mfaPendingCredentialLifetime) }
        temporaryProofs = temporaryProofs.filter { fresh($0.value.at, configuration.temporaryProofLifetime) }
        enterpriseTokens = enterpriseTokens.filter { fresh($0.value.issuedAt, BackendCore.enterpriseTokenLifetime) }
        oobCodes = oobCodes.filter { fresh($0.value.message.sentAt, configuration.oobCodeLifetime) }
        emailOutbox = emailOutbox.filter { fresh($0.sentAt, configuration.oobCodeLifetime) }
        totpSessions = totpSessions.filter { fresh($0.value.createdAt, BackendCore.totpEnrollmentWindow) }
    }

    /// How many records at least rebuild this state (``records`` has a few more: used and wrong-code
    /// marks), counted without building them: what the journal's rewrite compares its length with.
    var recordCountEstimate: Int {
        userCount + tenants.count + receipts.count + sessions.count + recaptchaTokens.count + outbox.count + emailOutbox.count
            + spentAppleTokens.count + pendingAppleTokens.count + revokedAppleCodes.count + appleConsents.count + refreshTokens.count
            + enterpriseTokens.count + temporaryProofs.count + mfaPending.count + totpSessions.count + fleetSilentPushes.count + (projectConfig == nil ? 0 : 1)
    }

    /// The records that rebuild this state (what a compacted journal holds).
    var records: [BackendRecord] {
        var out: [BackendRecord] = tenants.keys.sorted().map { .tenant(id: $0, tenants[$0]!) }
        out += allUsers.sorted { $0.createdAt < $1.createdAt }.map { .user($0) }
        for (id, r) in receipts {
            let answered = r.signIn.map { awaitingCode[$0] == nil } ?? false
            out.append(.receipt(id: id, secretSHA256: r.secretSHA256, appToken: r.appToken, issuedAt: r.issuedAt, signIn: r.signIn,
                                answered: answered ? true : nil))
        }
        for (id, s) in sessions.sorted(by: { $0.value.createdAt < $1.value.createdAt }) {
            out.append(.session(id: id, phoneNumber: s.phoneNumber, code: s.code, createdAt: s.createdAt, purpose: s.purpose, signIn: s.signIn,
                                tenant: s.tenant))
            out += Array(repeating: .wrongCode(session: id), count: s.attempts)
        }
        for (digest, t) in recaptchaTokens {
            out.append(.recaptcha(digest: digest, eventID: t.eventID, issuedAt: t.issuedAt, signIn: t.signIn))
            if t.used { out.append(.recaptchaUsed(digest: digest)) }
        }
        out += outbox.map { .sms($0) }
        for message in emailOutbox {
            let digest = BackendCore.digest(message.code)
            out.append(.oobCode(digest: digest, message))
            if oobCodes[digest]?.used == true { out.append(.oobCodeUsed(digest: digest)) }
        }
        for (digest, at) in spentAppleTokens { out.append(.appleTokenSpent(digest: digest, at: at)) }
        for (token, p) in pendingAppleTokens { out.append(.applePending(token: token, sub: p.sub, email: p.email, at: p.at, tenant: p.tenant)) }
        for (digest, at) in revokedAppleCodes { out.append(.appleCodeRevoked(digest: digest, at: at)) }
        for key in appleConsents.keys.sorted() {
            // sub|clientID: a sub has no "|", a client ID may.
            let parts = key.split(separator: "|", maxSplits: 1).map(String.init)
            if parts.count == 2 { out.append(.appleConsent(sub: parts[0], clientID: parts[1], granted: true)) }
        }
        for (digest, r) in refreshTokens {
            out.append(.refreshToken(digest: digest, localId: r.localId, provider: r.provider, secondFactor: r.secondFactor, issuedAt: r.issuedAt,
                                     claims: r.claims))
        }
        for (digest, token) in enterpriseTokens {
            out.append(.enterpriseToken(digest: digest, action: token.action, issuedAt: token.issuedAt))
            if token.used { out.append(.enterpriseTokenUsed(digest: digest)) }
        }
        for (digest, proof) in temporaryProofs {
            out.append(.temporaryProof(digest: digest, phoneNumber: proof.phoneNumber, at: proof.at, tenant: proof.tenant))
            if proof.used { out.append(.temporaryProofUsed(digest: digest)) }
        }
        for (digest, m) in mfaPending {
            out.append(.mfaPending(digest: digest, localId: m.localId, provider: m.provider, at: m.at, signIn: m.signIn, tenant: m.tenant))
            if m.used { out.append(.mfaPendingUsed(digest: digest)) }
        }
        for (digest, session) in totpSessions {
            out.append(.totpSession(digest: digest, localId: session.localId, secret: session.secret, createdAt: session.createdAt,
                                    tenant: session.tenant))
        }
        if let projectConfig { out.append(.projectConfig(projectConfig)) }
        out += fleetSilentPushes.all.map { .silentPush($0) }
        return out
    }
}

/// The backend's state directory: `journal.jsonl` (its ``format`` stamp, then one ``BackendRecord``
/// per line, appended with
/// `write(2)` before the answer that depends on it goes out, so a backend killed with SIGKILL and
/// started again knows its users, pending sessions, app credentials and reCAPTCHA tokens) and
/// `id-token-rsa-key.pem` (so ID tokens issued before a restart stay valid). The directory is the
/// user's alone (0700); it holds secrets.
struct BackendJournal: Sendable {
    let directory: URL
    private let file: AppendOnlyFile
    /// The records it was written with (the live state's, at open or at its last rewrite).
    let lines: Int

    var journalFile: URL { directory.appendingPathComponent("journal.jsonl") }

    /// The journal's format: 1 without a stamp, 2 with one (the records are the same). A backend
    /// opening an older journal rewrites it in the current format, as it rewrites every journal
    /// it opens; a newer one is refused and left as it is.
    static let format = StateFormat(kind: "backend journal", current: 2)

    /// What opening a journal found besides its state: the bytes of a last line a kill cut short
    /// (dropped), if there was one.
    struct Opened {
        var journal: BackendJournal
        var state: BackendState
        var key: _RSA.Signing.PrivateKey
        var droppedTail: Int?
    }

    /// Opens `directory`, replays its journal into a state, and rewrites the journal compacted
    /// (purged as of `now`). A torn last line (a write cut by a kill) is dropped, and said in
    /// ``Opened/droppedTail``; any other bad line is an error naming the line.
    static func open(_ directory: URL, configuration: BackendConfiguration, now: Date) throws(IdentityToolkitError) -> Opened {
        let manager = FileManager.default
        do {
            try manager.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw IdentityToolkitError(.stateUnavailable, "cannot create \(directory.path): \(error.localizedDescription)", status: 500)
        }
        let key = try idTokenKey(in: directory)
        var droppedTail: Int?
        var state = try replay(directory, droppedTail: &droppedTail)
        state.purge(now: now, configuration: configuration)
        return Opened(journal: try rewrite(directory, with: state.records), state: state, key: key, droppedTail: droppedTail)
    }

    /// ``replay(_:droppedTail:)`` for a caller that does not ask about a cut last line.
    static func replay(_ directory: URL) throws(IdentityToolkitError) -> BackendState {
        var droppedTail: Int?
        return try replay(directory, droppedTail: &droppedTail)
    }

    /// The state the journal in `directory` holds, read without writing anything. A torn last
    /// line (a write cut by a kill) is skipped, its length in `droppedTail`; any other bad line is an error naming the line; a
    /// journal of a newer format is `STATE_FORMAT`, naming both authsims.
    static func replay(_ directory: URL, droppedTail: inout Int?) throws(IdentityToolkitError) -> BackendState {
        let manager = FileManager.default
        let journal = directory.appendingPathComponent("journal.jsonl")
        var state = BackendState()
        if let data = manager.contents(atPath: journal.path) {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .secondsSince1970
            let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            let stamp = lines.first.flatMap(FormatStamp.parse(line:))
            do { _ = try format.version(of: stamp, in: journal.path) } catch {
                throw IdentityToolkitError(.stateFormat, error.message, status: 500)
            }
            for (index, line) in lines.enumerated() where !line.isEmpty && !(index == 0 && stamp != nil) {
                do {
                    state.apply(try decoder.decode(BackendRecord.self, from: Data(line)))
                } catch {
                    let isTornTail = index == lines.count - 1 && data.last != UInt8(ascii: "\n")
                    if isTornTail {
                        droppedTail = line.count
                        break
                    }
                    throw IdentityToolkitError(.stateCorrupt, "\(journal.path) line \(index + 1) is not a backend record: \(error)", status: 500)
                }
            }
        }
        return state
    }

    /// The journal rewritten with only `records` (a purged state's): written to a new file that is
    /// renamed over the old one, so a kill at any moment leaves one whole journal or the other.
    /// A running backend does this once the journal has grown to twice the records it had
    /// (``IdentityToolkit``), so that the file does not grow with history.
    func compacted(_ records: [BackendRecord]) throws(IdentityToolkitError) -> BackendJournal {
        try Self.rewrite(directory, with: records)
    }

    private static func rewrite(_ directory: URL, with records: [BackendRecord]) throws(IdentityToolkitError) -> BackendJournal {
        let journal = directory.appendingPathComponent("journal.jsonl")
        let compacted = directory.appendingPathComponent("journal.jsonl.new")
        do {
            // Written in chunks of a megabyte: the state is never held as one text beside itself.
            try? FileManager.default.removeItem(at: compacted)
            let file = try AppendOnlyFile(file: compacted, what: "the backend journal's rewrite", mode: 0o600, format: format)
            var chunk: [UInt8] = []
            chunk.reserveCapacity(1 << 20)
            for record in records {
                chunk += try encode(record).utf8
                if chunk.count >= 1 << 20 {
                    try file.append(chunk)
                    chunk.removeAll(keepingCapacity: true)
                }
            }
            if !chunk.isEmpty { try file.append(chunk) }
            guard rename(compacted.path, journal.path) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        } catch let error as IdentityToolkitError {
            try? FileManager.default.removeItem(at: compacted)
            throw error
        } catch {
            // The old journal stays whole; the part of the new one written goes.
            try? FileManager.default.removeItem(at: compacted)
            throw IdentityToolkitError(.stateUnavailable, "cannot rewrite \(journal.path): \(error)", status: 500)
        }
        do {
            let file = try AppendOnlyFile(file: journal, what: "the backend journal", mode: 0o600, format: format)
            return BackendJournal(directory: directory, file: file, lines: records.count)
        } catch {
            throw IdentityToolkitError(error.code == .format ? .stateFormat : .stateUnavailable, error.message, status: 500)
        }
    }

    private init(directory: URL, file: AppendOnlyFile, lines: Int) {
        self.directory = directory
        self.file = file
        self.lines = lines
    }

    /// Appends `records`, one line each, in one write.
    func append(_ records: [BackendRecord]) throws(IdentityToolkitError) {
        var lines = ""
        for record in records { lines += try Self.encode(record) }
        do { try file.append(lines) } catch {
            throw IdentityToolkitError(.stateUnavailable, error.message, status: 500)
        }
    }

    /// One journal line: the record's own Codable form, dates as seconds since 1970.
    static func encode(_ record: BackendRecord) throws(IdentityToolkitError) -> String {
        try text(record) + "\n"
    }

    /// A record as JSON text: a journal line without its newline, a shared store's record.
    static func text(_ record: BackendRecord) throws(IdentityToolkitError) -> String {
        do { return String(decoding: try encoder.encode(record), as: UTF8.self) } catch {
            throw IdentityToolkitError(.stateUnavailable, "cannot write a backend record: \(error)", status: 500)
        }
    }

    /// A record from its JSON text.
    static func record(_ text: String) throws(IdentityToolkitError) -> BackendRecord {
        do { return try decoder.decode(BackendRecord.self, from: Data(text.utf8)) } catch {
            throw IdentityToolkitError(.stateCorrupt, "not a backend record: \(error): \(text.prefix(200))", status: 500)
        }
    }

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()

    /// Keys sorted (Foundation's encoder wrote them in its dictionary's order, which changes with
    /// every process), dates as seconds since 1970 as before.
    private static let encoder = SortedJSONEncoder(dates: .secondsSince1970)

    /// The RS256 key that signs ID tokens: read from `id-token-rsa-key.pem`, or, in a new
    /// directory, the process's key (``IDTokenSigner/processKey``) written there (0600). Google
    /// signs every project's ID tokens with the same securetoken keys, so backends of one process
    /// sharing a key is what Firebase does; and a 2048-bit RSA key per directory cost the test
    /// suite 195 key generations, about 40 s of CPU on the 2-thread cooperative pool, which
    /// starved every other task for seconds at a time (issue 26). (Before RS256 the key was a
    /// P-256 one in `id-token-key.pem`: tokens it signed are no longer valid, as after a key
    /// rotation.)
    private static func idTokenKey(in directory: URL) throws(IdentityToolkitError) -> _RSA.Signing.PrivateKey {
        let file = directory.appendingPathComponent("id-token-rsa-key.pem")
        if let pem = try? String(contentsOf: file, encoding: .utf8) {
            do { return try _RSA.Signing.PrivateKey(pemRepresentation: pem) } catch {
                throw IdentityToolkitError(.stateCorrupt, "\(file.path) is not an RSA private key in PEM: \(error)", status: 500)
            }
        }
        let key = IDTokenSigner.processKey
        guard FileManager.default.createFile(atPath: file.path, contents: Data(key.pemRepresentation.utf8),
                                             attributes: [.posixPermissions: 0o600]) else {
            throw IdentityToolkitError(.stateUnavailable, "cannot write \(file.path)", status: 500)
        }
        return key
    }
}
