import IdentityToolkitAPI
import APNsWire
import RS256
import Utilities
import Crypto
import CryptoExtras
import Foundation
import Logging

/// Tells the observer, and a fleet's event sink, of events, each with the fleet position it
/// was made at (``IdentityToolkit/emitter()``).
struct EventEmitter: Sendable {
    let observer: (@Sendable (BackendEvent, SignInID?) -> Void)?
    let sink: (any BackendEventSink)?
    let position: Int64
    let clock: any WallClock

    /// Tells of `event`, a step of sign-in `signIn` (nil: of none, ``BackendEvent/isSignInStep``).
    func callAsFunction(_ event: BackendEvent, signIn: SignInID?) {
        observer?(event, signIn)
        sink?.record(event, signIn: signIn, position: position, at: clock.now)
    }
}

/// Firebase's side of phone auth: app credentials (verifyClient, silent push), codes by SMS,
/// sign-in with ID tokens. The rules and the state are ``BackendCore``'s; this actor runs one call
/// at a time through them, keeps what each changed (``change(_:)``: the journal, or a fleet's
/// store) before it answers, tells of its events, and does what the rules cannot: push, sign, hash
/// passwords. `BackendServer` puts it on HTTP.
package actor IdentityToolkit {
    package nonisolated let configuration: BackendConfiguration
    package nonisolated let tokenSigner: IDTokenSigner
    private let pusher: (any SilentPusher)?
    let clock: any WallClock
    let observer: (@Sendable (BackendEvent, SignInID?) -> Void)?
    /// Answers to give instead of the service's (tests, scenarios).
    package nonisolated let faults = BackendFaults()
    /// How long each route took to answer (the inspector's `/metrics`).
    package nonisolated let requestMetrics = RequestMetrics()
    /// What a user debugging a run wants to see: refused requests, silent pushes that failed.
    let logger: Logger
    /// Apple's side of Sign in with Apple, simulated.
    package nonisolated let appleID: AppleIDProvider
    /// The state and the rules; changed only through ``change(_:)``.
    var core: BackendCore
    /// What became of the latest silent pushes (at most 1000): `GET /emulator/v1/projects/{p}/silentPushes`,
    /// so that an app in another process can say why no push came.
    var silentPushes = RecentItems<SilentPushRecord>(capacity: BackendState.silentPushLimit)
    /// Every silent push's outcome, counted.
    package private(set) var silentPushTally = SilentPushTally()
    /// Where a backend of its own keeps what its calls change (memory, or the journal in `--state`).
    private var local: LocalLedger
    /// A fleet node's view of the fleet's store and its waiting changes (``open(configuration:pusher:clock:store:observer:logger:)``).
    var fleet: FleetLedger?
    /// How far into the fleet's records ``core``'s state is (0 outside a fleet).
    var storePosition: Int64 { fleet?.lastVersion ?? 0 }
    /// Where a fleet's node keeps its events for every node's inspector (``setEventSink(_:)``).
    var eventSink: (any BackendEventSink)?
    /// How the next provider pages end, first first (``answerNextProviderPage(_:)``); then the
    /// configuration's outcome.
    var providerPageAnswers: [ProviderPageOutcome] = []

    /// Keeps this node's events in the fleet's store too (``BackendEventSink``), each with the
    /// fleet position it was emitted at.
    package func setEventSink(_ sink: (any BackendEventSink)?) { eventSink = sink }

    /// Tells the observer, and a fleet's event sink, of `event`, a step of `signIn` (an event
    /// outside a call: the push, the front end).
    func emit(_ event: BackendEvent, signIn: SignInID?) { emitter()(event, signIn: signIn) }

    /// Tells of an event the toolkit did not make itself (the router's front end and faults): a
    /// request answered before any rule saw it, so a sign-in of its own.
    package func note(_ event: BackendEvent) { emit(event, signIn: event.isSignInStep ? .random() : nil) }

    /// What tells of events, with the fleet position as it is now.
    func emitter() -> EventEmitter {
        EventEmitter(observer: observer, sink: eventSink, position: storePosition, clock: clock)
    }

    /// - Parameter stateDirectory: where the backend keeps its journal and ID-token key, so that a
    ///   backend started again on the same directory (after a crash, a kill, a restart) goes on
    ///   with the same users, pending sessions, app credentials and reCAPTCHA tokens. `nil`: memory only.
    package init(configuration: BackendConfiguration = BackendConfiguration(), pusher: (any SilentPusher)?,
                clock: any WallClock = SystemWallClock(), stateDirectory: URL? = nil,
                observer: (@Sendable (BackendEvent, SignInID?) -> Void)? = nil,
                logger: Logger = Logger(label: "authsim.backend", factory: { _ in SwiftLogNoOpLogHandler() })) throws {
        let configuration = try configuration.validated()
        if let stateDirectory {
            let opened = try BackendJournal.open(stateDirectory, configuration: configuration, now: clock.now)
            if let dropped = opened.droppedTail {
                logger.warning("the journal's last line was cut short (a write the process's end interrupted, before its answer went out): dropped",
                               metadata: ["journal": "\(opened.journal.journalFile.path)", "bytes": "\(dropped)"])
            }
            try self.init(validated: configuration, pusher: pusher, clock: clock, journal: opened.journal, store: nil, state: opened.state,
                          key: opened.key, observer: observer, logger: logger)
        } else {
            try self.init(validated: configuration, pusher: pusher, clock: clock, journal: nil, store: nil, state: BackendState(), key: nil,
                          observer: observer, logger: logger)
        }
    }

    /// A backend whose state is the fleet's, in `store` (``open(configuration:pusher:clock:store:observer:logger:)``).
    init(configuration: BackendConfiguration, pusher: (any SilentPusher)?, clock: any WallClock, store: any BackendStore,
         key: _RSA.Signing.PrivateKey, appleKey: _RSA.Signing.PrivateKey, observer: (@Sendable (BackendEvent, SignInID?) -> Void)?, logger: Logger) throws {
        try self.init(validated: try configuration.validated(), pusher: pusher, clock: clock, journal: nil, store: store, state: BackendState(),
                      key: key, appleKey: appleKey, observer: observer, logger: logger)
    }

    /// - Parameters:
    ///   - key: the ID-token key; `nil`: the process's (``IDTokenSigner/processKey``).
    ///   - appleKey: the simulated Apple's signing key; `nil`: the process's.
    private init(validated configuration: BackendConfiguration, pusher: (any SilentPusher)?, clock: any WallClock, journal: BackendJournal?,
                 store: (any BackendStore)?, state: BackendState, key: _RSA.Signing.PrivateKey?, appleKey: _RSA.Signing.PrivateKey? = nil,
                 observer: (@Sendable (BackendEvent, SignInID?) -> Void)?, logger: Logger) throws {
        self.configuration = configuration
        self.pusher = pusher
        self.clock = clock
        self.observer = observer
        self.logger = logger
        let appleID = try appleKey.map { AppleIDProvider(clock: clock, key: $0) } ?? AppleIDProvider(clock: clock)
        self.appleID = appleID
        self.local = LocalLedger(journal: journal)
        self.journalFile = journal?.journalFile
        self.fleet = store.map(FleetLedger.init(store:))
        let tokenSigner = try key.map { try IDTokenSigner(projectID: configuration.projectID, key: $0) } ?? IDTokenSigner(projectID: configuration.projectID)
        self.tokenSigner = tokenSigner
        self.core = BackendCore(configuration: configuration, tokenSigner: tokenSigner, appleID: appleID, state: state)
        self.core.projectConfigIsShared = store != nil
    }

    /// Runs `call` through the core, and keeps what it changed before it answers: in the journal
    /// (``LocalLedger``: once this returns, a restarted backend knows it), or, with a shared
    /// store, in the node's next batch (``sharedChange(_:)``). A call's records are kept also when it throws after
    /// writing (a wrong code counts even though the answer is an error); its events are told once
    /// its records are kept.
    func change<T>(_ call: (inout CoreCall) throws(IdentityToolkitError) -> T) async throws(IdentityToolkitError) -> T {
        if fleet != nil { return try await sharedChange(call) }
        let outcome = core.handle(now: clock.now, call)
        if !outcome.records.isEmpty {
            do throws(IdentityToolkitError) {
                try local.keep(outcome.records, state: &core.state, now: clock.now, configuration: configuration, logger: logger)
            } catch {
                tell(CoreOutcome<T>(answer: .failure(error), records: [], events: [], logs: outcome.logs))
                throw error
            }
        }
        tell(outcome)
        return try outcome.answer.get()
    }

    /// Runs `call`, which only reads, through the core once its state is the store's (a fleet's)
    /// and tells of its events.
    func read<T>(_ call: (inout CoreCall) throws(IdentityToolkitError) -> T) async throws(IdentityToolkitError) -> T {
        guard fleet != nil else { return try check(call) }
        return try told(try await reading { _ in self.core.handle(now: self.clock.now, call) })
    }

    /// Runs `call`, which reads the state as this node has it or the request alone (the checks
    /// made before a password is hashed), and tells of its events.
    func check<T>(_ call: (inout CoreCall) throws(IdentityToolkitError) -> T) throws(IdentityToolkitError) -> T {
        try told(core.handle(now: clock.now, call))
    }

    /// A read's outcome, told: its answer, or an error for a rule that wrote in a read (a
    /// programming error, answered, never lost silently).
    private func told<T>(_ outcome: CoreOutcome<T>) throws(IdentityToolkitError) -> T {
        guard outcome.records.isEmpty else {
            throw IdentityToolkitError(.internal, "a read that changed the state: this is a bug in authsim")
        }
        tell(outcome)
        return try outcome.answer.get()
    }

    /// Tells of a call's events and writes its log lines; a refusal is logged too.
    func tell<T>(_ outcome: CoreOutcome<T>) {
        for line in outcome.logs {
            logger.log(level: line.level, "\(line.message)", metadata: line.metadata)
        }
        guard !outcome.events.isEmpty else { return }
        let emit = emitter()
        for event in outcome.events {
            if case .rejected(let endpoint, let error, _) = event {
                logger.info("request refused", metadata: ["endpoint": "\(endpoint)", "error": "\(error.message)"])
            }
            emit(event, signIn: event.isSignInStep ? outcome.signIn : nil)
        }
    }

    /// Drops what has expired now and hands the memory back (``LocalLedger/purge(_:now:configuration:)``),
    /// as every 4096th change does.
    package func purgeExpired() {
        LocalLedger.purge(&core.state, now: clock.now, configuration: configuration)
    }

    /// The users kept now (a backend of its own: a fleet node holds no rows between calls; ``users()`` reads the fleet's).
    package var userCount: Int { core.state.userCount }

    /// The journal file, when the backend keeps its state on disk.
    package nonisolated let journalFile: URL?

    /// Every SMS sent so far (a backend of its own; ``sentMessages()`` reads a fleet's).
    package var messages: [SMSMessage] { core.state.outbox }

    /// Every SMS sent so far (kept for its lifetime and the retention after it), oldest first: a
    /// fleet's read from the store.
    package func sentMessages() async throws(IdentityToolkitError) -> [SMSMessage] {
        try await reading { $0.outboxMessages }
    }

    /// Every user, oldest first: a fleet's read from the store.
    package func users() async throws(IdentityToolkitError) -> [BackendUser] {
        try await reading { $0.usersOldestFirst }
    }
    /// The latest silent pushes' results, oldest first: with a shared store, every node's (read
    /// from the store first), else this backend's.
    package func silentPushResults() async throws(IdentityToolkitError) -> [SilentPushRecord] {
        guard fleet != nil else { return silentPushes.all }
        return try await reading { $0.silentPushList }
    }
    package var allUsers: [BackendUser] { core.state.usersOldestFirst }

    // MARK: verifyClient

    /// Issues a receipt and a secret for an APNs token, and pushes the secret to the device in the
    /// environment `isSandbox` names.
    ///
    /// The answer waits for APNs' answer to the push (its HTTP/2 status), not for the push to
    /// reach the device, and never depends on it: a push APNs refuses (a token-type mismatch's
    /// `BadDeviceToken`) still gets its receipt, and the app waits for a push that never comes and
    /// falls back to reCAPTCHA, which is what users of the real service report. Waiting for APNs'
    /// answer keeps the order real networks give through delivery latency: the SDK drops a push
    /// whose receipt it has not yet seen (`AuthAppCredentialManager.canFinishVerification`), and a
    /// push that could overtake the answer on loopback would turn a working setup into a fallback
    /// that never happens on a device. The push reaches the device after the hub's latency, on its own.
    package func verifyClient(_ request: VerifyClientRequest) async throws(IdentityToolkitError) -> VerifyClientResponse {
        let (token, receipt, secret, signIn) = try await change { core throws(IdentityToolkitError) in try core.issueAppCredential(request) }
        let appToken = token.hex
        let environment: APNsEnvironment = request.isSandbox == true ? .sandbox : .production
        let bytes = FirebaseAuthPush(receipt: receipt, secret: secret).payload
        emit(.pushing(appToken: appToken, environment: environment, receipt: receipt), signIn: signIn)
        let result = await pusher?.push(token: token, environment: environment, topic: configuration.bundleID, payload: bytes)
            ?? PushResult(error: "the backend has no APNs sender")
        let push = SilentPushRecord(appToken: appToken, environment: environment, receipt: receipt, at: clock.now, result: result, signIn: signIn)
        emit(push.event, signIn: signIn)
        if fleet != nil {
            // The fleet's list: kept before the answer, so an app that asks another node why no
            // push came finds it. A store that cannot take it costs the answer nothing: the
            // receipt is kept, and the node logs why the list misses this push.
            do {
                try await change { core throws(IdentityToolkitError) in core.commit(.silentPush(push)) }
            } catch {
                logger.warning("verifyClient: the push's outcome is not in the fleet's silent-push list", metadata: ["error": "\(error.message)"])
            }
        } else {
            silentPushes.append(push)
        }
        silentPushTally.add(push)
        let line = push.logLine
        logger.log(level: line.level, "\(line.message)", metadata: line.metadata)
        return VerifyClientResponse(receipt: receipt, suggestedTimeout: String(configuration.suggestedTimeout))
    }

    // MARK: sendVerificationCode

    /// Checks the app credential (or that the number is a test number) and "sends" a code.
    /// - Returns: the session info, which the app keeps as its verification ID.
    /// - Parameter languageCode: the request's `X-Firebase-Locale`: the SMS's language.
    package func sendVerificationCode(_ request: SendVerificationCodeRequest,
                                     languageCode: String? = nil) async throws(IdentityToolkitError) -> SendVerificationCodeResponse {
        try await change { core throws(IdentityToolkitError) in try core.sendVerificationCode(request, languageCode: languageCode) }
    }

    // MARK: reCAPTCHA

    /// The handler page for the SDK's query: status and HTML.
    package func recaptchaPage(query: [URLQueryItem]) async -> (status: Int, html: String) {
        switch ReCAPTCHAPage.parse(query, configuration: configuration) {
        case .failure(let problem):
            return (400, "<!DOCTYPE html><html><body><h1>Bad reCAPTCHA request</h1><p id=\"authsim-error\">\(ReCAPTCHAPage.escapeHTML(problem.detail ?? problem.code.rawValue))</p></body></html>")
        case .success(let request):
            let domain = "\(configuration.projectID).firebaseapp.com"
            switch configuration.recaptchaOutcome {
            case .pass, .slowChallenge:
                let token: String
                do { token = try await issueRecaptchaToken(eventID: request.eventID) } catch {
                    return (error.httpStatus, "<!DOCTYPE html><html><body><h1>Backend error</h1><p id=\"authsim-error\">\(ReCAPTCHAPage.escapeHTML(error.message))</p></body></html>")
                }
                let delay: Double
                if case .slowChallenge(let seconds) = configuration.recaptchaOutcome { delay = seconds } else { delay = 0 }
                let redirect = ReCAPTCHAPage.redirect(scheme: request.scheme, domain: domain, eventID: request.eventID, token: token, error: nil)
                return (200, ReCAPTCHAPage.html(redirect: redirect, delay: delay, eventID: request.eventID))
            case .userCancels:
                return (200, ReCAPTCHAPage.html(redirect: nil, delay: 0, eventID: request.eventID))
            case .firebaseError(let code, let message):
                let redirect = ReCAPTCHAPage.redirect(scheme: request.scheme, domain: domain, eventID: request.eventID, token: nil,
                                                      error: (code, message))
                return (200, ReCAPTCHAPage.html(redirect: redirect, delay: 0, eventID: request.eventID))
            }
        }
    }

    /// Issues the token a solved reCAPTCHA challenge yields, for the verification attempt `eventID`
    /// (what the reCAPTCHA page hands back in its redirect). Single-use, short-lived.
    package func issueRecaptchaToken(eventID: String) async throws(IdentityToolkitError) -> String {
        try await change { core throws(IdentityToolkitError) in core.issueRecaptchaToken(eventID: eventID) }
    }

    /// The event a token was issued for, if it was issued here.
    package func recaptchaEventID(for token: String) async throws(IdentityToolkitError) -> String? {
        try await reading { $0.recaptchaTokens[BackendCore.digest(token)]?.eventID }
    }


    // MARK: signInWithPhoneNumber

    /// Runs a sign-in's change, then signs the ID token it granted, if any, and answers.
    ///
    /// The signature (RSA, ~0.4 ms) is made off the actor (``signToken(for:provider:secondFactor:authTime:extraClaims:now:)``):
    /// signed on it, every sign-in waited for every other's.
    func signIn<Answer>(_ decide: (inout CoreCall) throws(IdentityToolkitError) -> SignInDecision<Answer>) async throws(IdentityToolkitError) -> Answer {
        switch try await change(decide) {
        case .answer(let answer):
            return answer
        case .tokens(let grant, let answer):
            let idToken = await signToken(for: grant.user, provider: grant.provider, secondFactor: grant.secondFactor, authTime: grant.issuedAt,
                                          extraClaims: grant.claims, now: grant.issuedAt)
            return answer(SignedTokens(idToken: idToken, refreshToken: grant.refreshToken, expiresIn: "3600"))
        }
    }

    /// An ID token, signed on the caller's thread rather than the actor's (a nonisolated async
    /// function runs on the global executor): the state it reads was taken before.
    nonisolated func signToken(for user: BackendUser, provider: ProviderID, secondFactor: String?, authTime: Date,
                               extraClaims: [String: JSONValue], now: Date) async -> String {
        tokenSigner.token(for: user, provider: provider, secondFactor: secondFactor, authTime: authTime, extraClaims: extraClaims, now: now)
    }

    /// The code of a session (a verification ID), as the SMS carried it.
    package func code(forSession sessionInfo: String) async throws(IdentityToolkitError) -> String? {
        try await reading { $0.sessions[sessionInfo]?.code }
    }

    /// The emulator's view of sent codes (`GET /emulator/v1/projects/{project}/verificationCodes`,
    /// or a tenant's: `…/tenants/{t}/verificationCodes`).
    package func verificationCodes(tenant: String? = nil) async throws(IdentityToolkitError) -> VerificationCodesResponse {
        try await reading { state in
            VerificationCodesResponse(verificationCodes: state.outboxMessages.filter { $0.tenant == tenant }.map {
                VerificationCode(code: $0.code, phoneNumber: $0.phoneNumber, sessionInfo: $0.sessionInfo)
            })
        }
    }

    /// `getProjectConfig`: the project and its authorized domains (the first `firebaseapp.com`
    /// one is the auth domain the reCAPTCHA page is on).
    package nonisolated func projectConfig() -> GetProjectConfigResponse {
        GetProjectConfigResponse(projectId: configuration.projectID, authorizedDomains: configuration.authorizedDomains)
    }
}
