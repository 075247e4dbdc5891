import Foundation
import IdentityToolkitAPI
import Logging
import Utilities

/// One Identity Toolkit call being handled by the core: the core itself, the call's instant, its
/// source of randomness, and what it did so far (its records, events and log lines). The rules
/// (`Core/*.swift`) are its methods, so a rule runs only inside ``BackendCore/handle(now:random:_:)``,
/// always with the instant and the randomness of the call it serves.
struct CoreCall {
    /// The core, the call's for the time of the call.
    private(set) var core: BackendCore
    /// The instant of the call.
    let now: Date
    private var random: any BackendRandom
    private(set) var records: [BackendRecord] = []
    private(set) var events: [BackendEvent] = []
    private(set) var logs: [CoreLog] = []
    /// The sign-in the call is a step of, once known (``signIn()``, ``continueSignIn(_:)``).
    private(set) var signInID: SignInID?
    /// The tenant whose users the call reads and changes (nil: the project's own), once a rule
    /// entered it (``enter(tenant:endpoint:)``) from the request, its ID token, refresh token,
    /// session or pending credential.
    private(set) var tenant: String?

    init(core: consuming BackendCore, now: Date, random: any BackendRandom) {
        self.core = core
        self.now = now
        self.random = random
    }

    // MARK: The core's parts the rules read and change

    var configuration: BackendConfiguration { core.configuration }
    var tokenSigner: IDTokenSigner { core.tokenSigner }
    var appleID: AppleIDProvider { core.appleID }
    /// Read here; changed only through ``commit(_:)``.
    var state: BackendState {
        _read { yield core.state }
    }
    var smsDefenseSettings: SMSDefenseSettings {
        get { core.smsDefenseSettings }
        set { core.smsDefenseSettings = newValue }
    }
    var testPhoneNumbers: [String: String] {
        get { core.testPhoneNumbers }
        set { core.testPhoneNumbers = newValue }
    }
    var emulatorSignIn: EmulatorSignInSettings {
        get { core.emulatorSignIn }
        set { core.emulatorSignIn = newValue }
    }
    var projectConfigIsShared: Bool { core.projectConfigIsShared }

    /// The users of the call's tenant (the project's own before a rule entered one). Read in place:
    /// each lookup of a call borrows the directory rather than copying its five tables.
    var directory: UserDirectory {
        _read {
            if let tenant { yield core.state.users(in: tenant) } else { yield core.state.projectUsers }
        }
    }

    /// The configuration of the call's tenant; nil for the project's own users.
    var tenantConfig: TenantConfig? {
        tenant.map { core.state.tenants[$0] ?? .implicit }
    }

    /// Makes the call one of `asked`'s (nil or empty: no change): a request's `tenantId`, an Admin
    /// path's tenant, or the tenant an ID token, refresh token, session or pending credential
    /// belongs to. A second, different tenant is TENANT_ID_MISMATCH (the SDK's 17072), as the Auth
    /// Emulator checks a body's tenant against its path's and its ID token's (server.ts); a tenant
    /// with `disableAuth` is PROJECT_DISABLED. A tenant not made yet is the emulator's (every sign-in
    /// method on), and is kept once the call changes anything (``commit(_:)``).
    mutating func enter(tenant asked: String?, endpoint: BackendOperation) throws(IdentityToolkitError) {
        guard let asked, !asked.isEmpty else { return }
        if let tenant, tenant != asked {
            throw reject(endpoint, IdentityToolkitError(.tenantIDMismatch, "the request is for tenant \(tenant), not \(asked)"))
        }
        tenant = asked
        if tenantConfig?.disableAuth == true { throw reject(endpoint, IdentityToolkitError(.projectDisabled)) }
    }

    /// Puts the project config `config` in force (``BackendCore/adopt(_:)``).
    mutating func adopt(_ config: SharedProjectConfig) { core.adopt(config) }

    /// Applies `record` to this call's state without keeping it: for a trial on a copy of the
    /// call (`var trial = self`), whose changes are dropped with it.
    mutating func tryOut(_ record: BackendRecord) { core.state.apply(record) }

    // MARK: What a call does

    /// Applies a change and keeps it in the call's records: in the call's tenant (a record of a
    /// user, session or credential that names none is the tenant's), which is kept first if it is
    /// new.
    mutating func commit(_ record: BackendRecord) {
        var record = record
        if let tenant {
            if core.state.tenants[tenant] == nil {
                let made = BackendRecord.tenant(id: tenant, .implicit)
                core.state.apply(made)
                records.append(made)
            }
            record = record.inTenant(tenant)
        }
        core.state.apply(record)
        records.append(record)
    }

    /// Tells of `event` (once the call's records are kept).
    mutating func emit(_ event: BackendEvent) {
        events.append(event)
    }

    /// A line for the backend's log.
    mutating func log(_ level: Logger.Level, _ message: String, _ metadata: Logger.Metadata = [:]) {
        logs.append(CoreLog(level: level, message: message, metadata: metadata))
    }

    /// Tells of a refusal and gives back its error, to throw.
    mutating func reject(_ endpoint: BackendOperation, _ error: IdentityToolkitError, cause: RejectionCause? = nil) -> IdentityToolkitError {
        emit(.rejected(endpoint: endpoint, error, cause: cause))
        return error
    }

    /// The sign-in this call is a step of (``SignInID``): the one it continues, or a new one
    /// from here on.
    mutating func signIn() -> SignInID {
        if let signInID { return signInID }
        let id = SignInID(rawValue: randomID(length: 16))
        signInID = id
        return id
    }

    /// Makes this call a step of sign-in `id`, which a record the call names carries (a receipt,
    /// a session, a pending credential); nil (a record from before sign-ins had IDs), or a call
    /// that already continues one, changes nothing.
    mutating func continueSignIn(_ id: SignInID?) {
        if signInID == nil { signInID = id }
    }

    // MARK: Randomness, the call's

    /// `count` random bytes in base64url.
    mutating func randomString(bytes count: Int) -> String {
        Base64URL.encode(randomBytes(count))
    }

    /// `count` random bytes from the call's source.
    mutating func randomBytes(_ count: Int) -> [UInt8] {
        random.bytes(count)
    }

    /// Six random digits, as the SMS carries them (unbiased).
    mutating func randomCode() -> String {
        var generator = BackendRandomGenerator(source: random)
        let digits = String(Int.random(in: 0..<1_000_000, using: &generator))
        random = generator.source
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    /// `length` letters and digits, as the emulator's `randomId`, without modulo bias (bytes of
    /// 248 and above are drawn again).
    mutating func randomID(length: Int) -> String {
        var characters: [UInt8] = []
        characters.reserveCapacity(length)
        while characters.count < length {
            for byte in random.bytes(length - characters.count + 8) where byte < 248 && characters.count < length {
                characters.append(Self.idAlphabet[Int(byte % 62)])
            }
        }
        return String(decoding: characters, as: UTF8.self)
    }
    /// The letters and digits of IDs (the emulator's `randomId`'s).
    static let idAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
}
