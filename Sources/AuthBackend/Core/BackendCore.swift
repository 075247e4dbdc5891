import Foundation
import IdentityToolkitAPI
import Logging
import RS256
import Utilities

/// Firebase's side of phone auth as a value: the state and the rules that answer each Identity
/// Toolkit call, with no actor, clock, store or network. A call is handled at an instant, with a
/// source of randomness (``handle(now:random:_:)``), and gives back its answer, the records it
/// changed the state with, the events it tells of and what it would log: what to keep, tell and
/// do is ``IdentityToolkit``'s (the journal or the fleet's store, observers, APNs, ID-token signing).
struct BackendCore {
    let configuration: BackendConfiguration
    /// Verifies ID tokens and seals refresh tokens (its keys, no I/O); ID tokens themselves are
    /// signed after the call (``SignInDecision``), off the actor.
    let tokenSigner: IDTokenSigner
    /// Apple's side of Sign in with Apple (its key, no I/O).
    let appleID: AppleIDProvider
    /// Users, app credentials, sessions, reCAPTCHA tokens and SMS; changed only through ``commit(_:)``.
    var state: BackendState
    /// The project's reCAPTCHA SMS defense, from the configuration and changed at run time through
    /// the project config. In memory, as the emulator's config is.
    var smsDefenseSettings: SMSDefenseSettings
    /// The project's test phone numbers: the configuration's, changed at run time through the
    /// project config (`signIn.phoneNumber.testPhoneNumbers`).
    var testPhoneNumbers: [String: String]
    /// The emulator's own sign-in settings, kept and echoed by the project config (and its export).
    var emulatorSignIn = EmulatorSignInSettings()
    /// Whether the project config is a record (a fleet's, which every node adopts) or stays in
    /// memory, as the emulator's does.
    var projectConfigIsShared = false
    /// The call being handled: its instant, its randomness, and what it did so far.
    private var step = CoreStep(now: Date(timeIntervalSince1970: 0), random: SecureBackendRandom())

    init(configuration: BackendConfiguration, tokenSigner: IDTokenSigner, appleID: AppleIDProvider, state: BackendState) {
        self.configuration = configuration
        self.tokenSigner = tokenSigner
        self.appleID = appleID
        self.state = state
        self.smsDefenseSettings = SMSDefenseSettings(configuration)
        self.testPhoneNumbers = configuration.testPhoneNumbers
    }

    /// A core with no users, signing with the process's keys (``IDTokenSigner/processKey``): what
    /// a backend in memory starts from, and what the rules' tests run on.
    init(configuration: BackendConfiguration) throws {
        let configuration = try configuration.validated()
        self.init(configuration: configuration, tokenSigner: try IDTokenSigner(projectID: configuration.projectID),
                  appleID: try AppleIDProvider(), state: BackendState())
    }

    /// Handles one call: `call` runs the rules at `now`, drawing from `random`. What it changed is
    /// in the outcome also when it throws (a wrong code counts though the answer is an error).
    mutating func handle<Answer>(now: Date, random: any BackendRandom = SecureBackendRandom(),
                                 _ call: (inout BackendCore) throws(IdentityToolkitError) -> Answer) -> CoreOutcome<Answer> {
        step = CoreStep(now: now, random: random)
        let answer = Result { () throws(IdentityToolkitError) -> Answer in try call(&self) }
        // A call that told of a sign-in's step without naming one started its own.
        let signIn = step.signIn ?? (step.events.contains(where: \.isSignInStep) ? self.signIn() : nil)
        let done = step
        step = CoreStep(now: now, random: SecureBackendRandom())
        return CoreOutcome(answer: answer, records: done.records, events: done.events, logs: done.logs, signIn: signIn)
    }

    /// The sign-in this call is a step of (``SignInID``): the one it continues, or a new one
    /// from here on.
    mutating func signIn() -> SignInID {
        if let id = step.signIn { return id }
        let id = SignInID(rawValue: randomID(length: 16))
        step.signIn = id
        return id
    }

    /// Makes this call a step of sign-in `id`, which a record the call names carries (a receipt,
    /// a session, a pending credential); nil (a record from before sign-ins had IDs), or a call
    /// that already continues one, changes nothing.
    mutating func continueSignIn(_ id: SignInID?) {
        if step.signIn == nil { step.signIn = id }
    }

    /// The instant of the call being handled.
    var now: Date { step.now }

    /// Applies a change and keeps it in the call's records.
    mutating func commit(_ record: BackendRecord) {
        state.apply(record)
        step.records.append(record)
    }

    /// Tells of `event` (once the call's records are kept).
    mutating func emit(_ event: BackendEvent) {
        step.events.append(event)
    }

    /// A line for the backend's log.
    mutating func log(_ level: Logger.Level, _ message: String, _ metadata: Logger.Metadata = [:]) {
        step.logs.append(CoreLog(level: level, message: message, metadata: metadata))
    }

    /// Tells of a refusal and gives back its error, to throw.
    mutating func reject(_ endpoint: BackendOperation, _ error: IdentityToolkitError, cause: RejectionCause? = nil) -> IdentityToolkitError {
        emit(.rejected(endpoint: endpoint, error, cause: cause))
        return error
    }

    /// `count` random bytes in base64url.
    mutating func randomString(bytes count: Int) -> String {
        Base64URL.encode(randomBytes(count))
    }

    /// `count` random bytes from the call's source.
    mutating func randomBytes(_ count: Int) -> [UInt8] {
        step.random.bytes(count)
    }

    /// Six random digits, as the SMS carries them (unbiased).
    mutating func randomCode() -> String {
        var generator = BackendRandomGenerator(source: step.random)
        let digits = String(Int.random(in: 0..<1_000_000, using: &generator))
        step.random = generator.source
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    /// `length` letters and digits, as the emulator's `randomId`, without modulo bias (bytes of
    /// 248 and above are drawn again).
    mutating func randomID(length: Int) -> String {
        var characters: [UInt8] = []
        characters.reserveCapacity(length)
        while characters.count < length {
            for byte in step.random.bytes(length - characters.count + 8) where byte < 248 && characters.count < length {
                characters.append(Self.idAlphabet[Int(byte % 62)])
            }
        }
        return String(decoding: characters, as: UTF8.self)
    }
    private static let idAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
}

/// What one call did: its answer or error, the records to keep before it answers, the events to
/// tell once they are kept, and the lines to log.
struct CoreOutcome<Answer> {
    let answer: Result<Answer, IdentityToolkitError>
    let records: [BackendRecord]
    let events: [BackendEvent]
    let logs: [CoreLog]
    /// The sign-in its events are steps of (``SignInID``); nil for a call that is none.
    var signIn: SignInID? = nil
}

/// A line a rule logs, written by the actor.
struct CoreLog {
    let level: Logger.Level
    let message: String
    let metadata: Logger.Metadata
}

/// The call being handled.
private struct CoreStep {
    let now: Date
    var random: any BackendRandom
    var records: [BackendRecord] = []
    var events: [BackendEvent] = []
    var signIn: SignInID?
    var logs: [CoreLog] = []

    init(now: Date, random: any BackendRandom) {
        self.now = now
        self.random = random
    }
}

/// Where the core's secrets and identifiers come from: libcrypto's generator in a backend
/// (``SecureBackendRandom``), a seeded one in tests, so that a call's outcome can be written down.
protocol BackendRandom: Sendable {
    mutating func bytes(_ count: Int) -> [UInt8]
}

/// libcrypto's generator, in user space (``SecureRandom``).
struct SecureBackendRandom: BackendRandom {
    func bytes(_ count: Int) -> [UInt8] { SecureRandom.bytes(count) }
}

/// A ``BackendRandom`` as a `RandomNumberGenerator`, for the standard library's unbiased `random(in:using:)`.
private struct BackendRandomGenerator: RandomNumberGenerator {
    var source: any BackendRandom

    mutating func next() -> UInt64 {
        source.bytes(8).reduce(0) { $0 << 8 | UInt64($1) }
    }
}
