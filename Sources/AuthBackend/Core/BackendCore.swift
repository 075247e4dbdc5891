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

    /// Handles one call: `body` runs the rules on the call (``CoreCall``: this core, the instant
    /// `now`, randomness from `random`, and what the call did so far). What it changed is in the
    /// outcome also when it throws (a wrong code counts though the answer is an error).
    mutating func handle<Answer>(now: Date, random: any BackendRandom = SecureBackendRandom(),
                                 _ body: (inout CoreCall) throws(IdentityToolkitError) -> Answer) -> CoreOutcome<Answer> {
        // The call takes the core (its state's tables with no second reference, so the rules
        // change them in place) and gives it back.
        var call = CoreCall(core: consume self, now: now, random: random)
        let answer = Result { () throws(IdentityToolkitError) -> Answer in try body(&call) }
        // A call that told of a sign-in's step without naming one started its own.
        let signIn = call.signInID ?? (call.events.contains(where: \.isSignInStep) ? call.signIn() : nil)
        self = call.core
        return CoreOutcome(answer: answer, records: call.records, events: call.events, logs: call.logs, signIn: signIn)
    }
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

/// Where the core's secrets and identifiers come from: libcrypto's generator in a backend
/// (``SecureBackendRandom``), a seeded one in tests, so that a call's outcome can be written down.
protocol BackendRandom: Sendable {
    mutating func bytes(_ count: Int) -> [UInt8]
}

/// libcrypto's generator, in user space (``SecureRandom``).
struct SecureBackendRandom: BackendRandom {
    func bytes(_ count: Int) -> [UInt8] { SecureRandom.bytes(count) }
}

/// libcrypto's generator, recorded, so that the rules can run again on the same bytes: a fleet
/// node's rules run again once the rows they lacked are loaded, and a new user's ID (a row the
/// rules read to be sure it is free) must be the one they drew before. ``rewind()`` before each
/// run; bytes past what the last run drew are new.
final class RecordedRandom: @unchecked Sendable {
    private var tape: [UInt8] = []
    private var cursor = 0

    func rewind() { cursor = 0 }

    func bytes(_ count: Int) -> [UInt8] {
        if cursor + count > tape.count { tape += SecureRandom.bytes(cursor + count - tape.count) }
        defer { cursor += count }
        return Array(tape[cursor..<cursor + count])
    }

    /// This recording as a ``BackendRandom`` (made, run and rewound on one actor).
    var source: some BackendRandom { Source(recorded: self) }

    private struct Source: BackendRandom {
        let recorded: RecordedRandom
        func bytes(_ count: Int) -> [UInt8] { recorded.bytes(count) }
    }
}

/// A ``BackendRandom`` as a `RandomNumberGenerator`, for the standard library's unbiased `random(in:using:)`.
struct BackendRandomGenerator: RandomNumberGenerator {
    var source: any BackendRandom

    mutating func next() -> UInt64 {
        source.bytes(8).reduce(0) { $0 << 8 | UInt64($1) }
    }
}
