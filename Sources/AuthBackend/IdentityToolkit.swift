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
    let observer: (@Sendable (BackendEvent) -> Void)?
    let sink: (any BackendEventSink)?
    let position: Int64
    let clock: any WallClock

    func callAsFunction(_ event: BackendEvent) {
        observer?(event)
        sink?.record(event, position: position, at: clock.now)
    }
}

/// Firebase's side of phone auth: app credentials (verifyClient, silent push), codes by SMS,
/// sign-in with ID tokens. State lives here; `BackendServer` puts it on HTTP.
public actor IdentityToolkit {
    public nonisolated let configuration: BackendConfiguration
    public nonisolated let tokenSigner: IDTokenSigner
    private let pusher: (any SilentPusher)?
    let clock: any WallClock
    let observer: (@Sendable (BackendEvent) -> Void)?
    /// Answers to give instead of the service's (tests, scenarios).
    public nonisolated let faults = BackendFaults()
    /// How long each route took to answer (the inspector's `/metrics`).
    public nonisolated let requestMetrics = RequestMetrics()
    /// What a user debugging a run wants to see: refused requests, silent pushes that failed.
    let logger: Logger
    /// Apple's side of Sign in with Apple, simulated.
    public nonisolated let appleID: AppleIDProvider
    /// Users, app credentials, sessions, reCAPTCHA tokens and SMS; changed only through ``commit(_:)``.
    var state = BackendState()
    /// The project's reCAPTCHA SMS defense, from the configuration and changed at run time through
    /// the project config (``updateProjectConfig(_:)``). In memory, as the emulator's config is.
    var smsDefenseSettings: SMSDefenseSettings
    /// The project's test phone numbers: the configuration's, changed at run time through the
    /// project config (`signIn.phoneNumber.testPhoneNumbers`). In memory, as the emulator's config is.
    var testPhoneNumbers: [String: String]
    /// The emulator's own sign-in settings, kept and echoed by the project config (and its export).
    var emulatorSignIn = EmulatorSignInSettings()
    /// What became of the latest silent pushes (at most 1000): `GET /emulator/v1/projects/{p}/silentPushes`,
    /// so that an app in another process can say why no push came.
    var silentPushes = RecentItems<SilentPushRecord>(capacity: BackendState.silentPushLimit)
    /// Every silent push's outcome, counted.
    public private(set) var silentPushTally = SilentPushTally()
    /// Where every change is written before its answer goes out (`nil`: memory only, or a shared store).
    private var journal: BackendJournal?
    private var commitsSincePurge = 0
    /// Lines in the journal, and how many it had when last looked at: every
    /// ``BackendConfiguration/journalCompactionLines`` lines the state is purged and, if the journal
    /// is twice its records, rewritten with them.
    private var journalLines = 0
    private var journalLinesAtCheck = 0
    /// The fleet's store, when this backend is one node of several (``open(configuration:pusher:clock:store:observer:logger:)``).
    let sharedStore: (any BackendStore)?
    /// How far into the shared store's records ``state`` is.
    var storePosition: Int64 = 0
    /// Records in the shared store since its last snapshot (as far as this node saw), and how
    /// many records that snapshot held: the next snapshot is due when the first reaches
    /// ``BackendConfiguration/storeSnapshotEvery`` and the second (so that writing snapshots costs
    /// at most as many records as they replace).
    var recordsSinceSnapshot = 0
    var lastSnapshotSize = 0
    /// Where a fleet's node keeps its events for every node's inspector (``setEventSink(_:)``).
    var eventSink: (any BackendEventSink)?
    /// A change whose commit failed: what ``state`` holds may not be what the store holds, so the
    /// next change or read rebuilds it from the store's first record.
    var stateIsStale = false
    /// The records of the shared change in progress (``change(_:)``); `nil` outside one.
    var pendingRecords: [String]?
    /// Changes waiting for the node's next batch (``change(_:)``), and whether batches are running.
    var queuedChanges: [QueuedChange] = []
    var changeBatchesRunning = false
    /// One change or read of the shared store at a time on this node (the actor is re-entered
    /// while a change waits for the database): a taken flag and the waiters, in order.
    var storeTurnTaken = false
    var storeTurnWaiters: [CheckedContinuation<Void, Never>] = []

    /// Keeps this node's events in the fleet's store too (``BackendEventSink``), each with the
    /// fleet position it was emitted at.
    public func setEventSink(_ sink: (any BackendEventSink)?) { eventSink = sink }

    /// Tells the observer, and a fleet's event sink, of `event`.
    func emit(_ event: BackendEvent) { emitter()(event) }

    /// Tells of an event the toolkit did not make itself (the router's front end and faults).
    public func note(_ event: BackendEvent) { emit(event) }

    /// What tells of events, with the fleet position as it is now: for closures that run after
    /// the change (a sign-in's, once its ID token is signed), outside the actor.
    func emitter() -> EventEmitter {
        EventEmitter(observer: observer, sink: eventSink, position: storePosition, clock: clock)
    }

    /// - Parameter stateDirectory: where the backend keeps its journal and ID-token key, so that a
    ///   backend started again on the same directory (after a crash, a kill, a restart) goes on
    ///   with the same users, pending sessions, app credentials and reCAPTCHA tokens. `nil`: memory only.
    public init(configuration: BackendConfiguration = BackendConfiguration(), pusher: (any SilentPusher)?,
                clock: any WallClock = SystemWallClock(), stateDirectory: URL? = nil,
                observer: (@Sendable (BackendEvent) -> Void)? = nil,
                logger: Logger = Logger(label: "authsim.backend", factory: { _ in SwiftLogNoOpLogHandler() })) throws {
        let configuration = try configuration.validated()
        if let stateDirectory {
            let (journal, state, key) = try BackendJournal.open(stateDirectory, configuration: configuration, now: clock.now)
            try self.init(validated: configuration, pusher: pusher, clock: clock, journal: journal, store: nil, state: state, key: key,
                          observer: observer, logger: logger)
        } else {
            try self.init(validated: configuration, pusher: pusher, clock: clock, journal: nil, store: nil, state: BackendState(), key: nil,
                          observer: observer, logger: logger)
        }
    }

    /// A backend whose state is the fleet's, in `store` (``open(configuration:pusher:clock:store:observer:logger:)``).
    init(configuration: BackendConfiguration, pusher: (any SilentPusher)?, clock: any WallClock, store: any BackendStore,
         key: _RSA.Signing.PrivateKey, appleKey: _RSA.Signing.PrivateKey, observer: (@Sendable (BackendEvent) -> Void)?, logger: Logger) throws {
        try self.init(validated: try configuration.validated(), pusher: pusher, clock: clock, journal: nil, store: store, state: BackendState(),
                      key: key, appleKey: appleKey, observer: observer, logger: logger)
    }

    /// - Parameters:
    ///   - key: the ID-token key; `nil`: the process's (``IDTokenSigner/processKey``).
    ///   - appleKey: the simulated Apple's signing key; `nil`: the process's.
    private init(validated configuration: BackendConfiguration, pusher: (any SilentPusher)?, clock: any WallClock, journal: BackendJournal?,
                 store: (any BackendStore)?, state: BackendState, key: _RSA.Signing.PrivateKey?, appleKey: _RSA.Signing.PrivateKey? = nil,
                 observer: (@Sendable (BackendEvent) -> Void)?, logger: Logger) throws {
        self.configuration = configuration
        self.pusher = pusher
        self.clock = clock
        self.observer = observer
        self.logger = logger
        self.appleID = try appleKey.map { AppleIDProvider(clock: clock, key: $0) } ?? AppleIDProvider(clock: clock)
        self.smsDefenseSettings = SMSDefenseSettings(configuration)
        self.testPhoneNumbers = configuration.testPhoneNumbers
        self.journal = journal
        self.journalLines = journal?.lines ?? 0
        self.journalLinesAtCheck = journalLines
        self.journalFile = journal?.journalFile
        self.sharedStore = store
        self.state = state
        self.tokenSigner = try key.map { try IDTokenSigner(projectID: configuration.projectID, key: $0) } ?? IDTokenSigner(projectID: configuration.projectID)
    }

    /// Applies a change and writes it: to the journal (once this returns, a restarted backend
    /// knows it), or, with a shared store, to the change in progress, which ``change(_:)`` commits
    /// before the answer goes out.
    func commit(_ record: BackendRecord) throws(IdentityToolkitError) {
        if sharedStore != nil {
            // A rule that writes outside change {}: a programming error, answered, never lost silently.
            guard pendingRecords != nil else {
                throw IdentityToolkitError(.internal, "a change to the shared store outside a change: this is a bug in authsim")
            }
            pendingRecords?.append(try BackendJournal.text(record))
        } else if let journal {
            try journal.append(record)
            journalLines += 1
        }
        state.apply(record)
        commitsSincePurge += 1
        if commitsSincePurge >= 4096 {
            commitsSincePurge = 0
            purgeExpired()
        }
        if let journal, journalLines - journalLinesAtCheck >= configuration.journalCompactionLines {
            // The journal twice the state (or more): rewrite it with the state's records, so the
            // file follows the state, not the history. A state whose records are all live is not
            // rewritten for nothing. A failure keeps the old file, still whole.
            state.purge(now: clock.now, configuration: configuration)
            if journalLines >= 2 * state.recordCountEstimate {
                let records = state.records
                do {
                    let rewritten = try journal.compacted(records)
                    self.journal = rewritten
                    journalLines = rewritten.lines
                } catch {
                    logger.error("the journal could not be rewritten; it keeps growing", metadata: ["error": "\(error.message)"])
                }
            }
            journalLinesAtCheck = journalLines
        }
    }

    /// Drops what has expired now (``BackendState/purge(now:configuration:)``), as every 4096th
    /// change does, and hands what that and the sign-ins since freed back to the system (100,000
    /// sign-ins, 1,000 at once: peak resident 294-323 MB without, 272-280 MB with).
    package func purgeExpired() {
        state.purge(now: clock.now, configuration: configuration)
        releaseFreeMemory()
    }

    /// The users kept now.
    package var userCount: Int { state.users.count }

    /// The journal file, when the backend keeps its state on disk.
    public nonisolated let journalFile: URL?

    /// Every SMS sent so far.
    public var messages: [SMSMessage] { state.outbox }
    /// The latest silent pushes' results, oldest first: with a shared store, every node's (read
    /// from the store first), else this backend's.
    public func silentPushResults() async throws(IdentityToolkitError) -> [SilentPushRecord] {
        guard sharedStore != nil else { return silentPushes.all }
        try await readShared()
        return state.fleetSilentPushes.all
    }
    public var allUsers: [BackendUser] { state.users.values.sorted { $0.createdAt < $1.createdAt } }

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
    public func verifyClient(_ request: VerifyClientRequest) async throws(IdentityToolkitError) -> VerifyClientResponse {
        guard let appToken = request.appToken, !appToken.isEmpty else { throw reject(.verifyClient, IdentityToolkitError(.missingIOSAppToken)) }
        guard let token = DeviceToken(hex: appToken) else {
            throw reject(.verifyClient, IdentityToolkitError(.invalidAppCredential, "the APNs token is not hex"))
        }
        let receipt = Self.randomString(bytes: 48)
        let secret = Self.randomString(bytes: 12)
        do {
            try await change { () throws(IdentityToolkitError) in
                try commit(.receipt(id: receipt, secretSHA256: Self.digest(secret), appToken: appToken.uppercased(), issuedAt: clock.now))
            }
        } catch { throw reject(.verifyClient, error) }
        let environment: APNsEnvironment = request.isSandbox == true ? .sandbox : .production
        let bytes = FirebaseAuthPush(receipt: receipt, secret: secret).payload
        emit(.pushing(appToken: appToken, environment: environment, receipt: receipt))
        let result = await pusher?.push(token: token, environment: environment, topic: configuration.bundleID, payload: bytes)
            ?? PushResult(error: "the backend has no APNs sender")
        emit(.verifyClient(appToken: appToken, environment: environment, receipt: receipt, push: result))
        let record = SilentPushRecord(appToken: token.hex, environment: environment.rawValue, at: RFC3339.string(clock.now), status: result.status,
                                      reason: result.reason?.rawValue, error: result.error)
        if sharedStore != nil {
            // The fleet's list: kept before the answer, so an app that asks another node why no
            // push came finds it. A store that cannot take it costs the answer nothing: the
            // receipt is kept, and the node logs why the list misses this push.
            do {
                try await change { () throws(IdentityToolkitError) in try commit(.silentPush(record)) }
            } catch {
                logger.warning("verifyClient: the push's outcome is not in the fleet's silent-push list", metadata: ["error": "\(error.message)"])
            }
        } else {
            silentPushes.append(record)
        }
        silentPushTally.add(result)
        var metadata: Logger.Metadata = ["device-token": "\(token.hex)", "environment": "\(environment)", "receipt": "\(receipt.prefix(8))"]
        if let status = result.status { metadata["status"] = "\(status)" }
        if let reason = result.reason { metadata["reason"] = "\(reason)" }
        if let error = result.error { metadata["error"] = "\(error)" }
        if result.accepted {
            logger.debug("verifyClient: silent push accepted", metadata: metadata)
        } else if result.status != nil {
            logger.warning("verifyClient: APNs refused the silent push; the app will fall back to reCAPTCHA", metadata: metadata)
        } else {
            logger.warning("verifyClient: the silent push could not be sent; the app will fall back to reCAPTCHA", metadata: metadata)
        }
        return VerifyClientResponse(receipt: receipt, suggestedTimeout: String(configuration.suggestedTimeout))
    }

    // MARK: sendVerificationCode

    /// Checks the app credential (or that the number is a test number) and "sends" a code.
    /// - Returns: the session info, which the app keeps as its verification ID.
    /// - Parameter languageCode: the request's `X-Firebase-Locale`: the SMS's language.
    public func sendVerificationCode(_ request: SendVerificationCodeRequest,
                                     languageCode: String? = nil) async throws(IdentityToolkitError) -> SendVerificationCodeResponse {
        try await change { () throws(IdentityToolkitError) in
            let endpoint = BackendOperation.sendVerificationCode
            let number: String
            do throws(IdentityToolkitError) { number = try PhoneNumbers.validate(request.phoneNumber) } catch { throw reject(endpoint, error) }
            if let holder = state.userByPhone[number].flatMap({ state.users[$0] }), holder.hasSecondFactor {
                throw reject(endpoint, IdentityToolkitError(
                    .unsupportedFirstFactor, "A phone number cannot be set as a first factor on an SMS based MFA user."))
            }
            try checkAppProof(number: number, iosReceipt: request.iosReceipt, iosSecret: request.iosSecret,
                              recaptchaToken: request.recaptchaToken, captchaResponse: request.captchaResponse,
                              recaptchaVersion: request.recaptchaVersion, clientType: request.clientType,
                              action: .sendVerificationCode, endpoint: endpoint)
            return SendVerificationCodeResponse(
                sessionInfo: try openSession(number: number, purpose: nil, languageCode: languageCode, endpoint: endpoint))
        }
    }

    /// The proof that a request comes from the real app: a test number needs none; with SMS
    /// defense in AUDIT or ENFORCE a reCAPTCHA Enterprise token that passes the assessment
    /// (``smsDefense(captchaResponse:recaptchaVersion:clientType:action:hasLegacyProof:endpoint:)``);
    /// otherwise an app credential (the receipt and the secret its silent push carried) or a
    /// reCAPTCHA v2 token.
    func checkAppProof(number: String, iosReceipt: String?, iosSecret: String?, recaptchaToken: String?,
                       captchaResponse: String? = nil, recaptchaVersion: String? = nil, clientType: String? = nil,
                       action: RecaptchaAction, endpoint: BackendOperation) throws(IdentityToolkitError) {
        guard testPhoneNumbers[number] == nil else {
            emit(.codeRequested(phoneNumber: number, proof: .testMode, receipt: nil, endpoint: endpoint))
            return
        }
        let hasLegacyProof = !(iosReceipt ?? "").isEmpty || recaptchaToken != nil
        if try smsDefense(captchaResponse: captchaResponse, recaptchaVersion: recaptchaVersion, clientType: clientType, action: action,
                          hasLegacyProof: hasLegacyProof, endpoint: endpoint) {
            emit(.codeRequested(phoneNumber: number, proof: .recaptchaEnterprise, receipt: nil, endpoint: endpoint))
            return
        }
        if let iosReceipt, !iosReceipt.isEmpty {
            let secretDigest = iosSecret.flatMap { $0.isEmpty ? nil : Self.digest($0) }
            if case .refuse(let error) = state.checkAppCredential(receipt: iosReceipt, secretDigest: secretDigest, now: clock.now,
                                                                  lifetime: configuration.receiptLifetime) {
                throw reject(endpoint, error)
            }
            emit(.codeRequested(phoneNumber: number, proof: .silentPush, receipt: iosReceipt, endpoint: endpoint))
        } else if let recaptchaToken {
            try useRecaptchaToken(recaptchaToken, endpoint: endpoint)
            emit(.codeRequested(phoneNumber: number, proof: .reCAPTCHA, receipt: nil, endpoint: endpoint))
        } else if configuration.acceptUnverifiedCodeRequests {
            logger.info("code request without app verification taken (--accept-unverified-code-requests, as the Auth Emulator)",
                        metadata: ["endpoint": "\(endpoint)", "phone": "\(number)"])
            emit(.codeRequested(phoneNumber: number, proof: .unverified, receipt: nil, endpoint: endpoint))
        } else {
            throw reject(endpoint, IdentityToolkitError(
                .missingAppCredential,
                "no iOS receipt and secret and no reCAPTCHA token; with app verification disabled for testing (settings.isAppVerificationDisabledForTesting, which useEmulator(withHost:port:) turns on) only test phone numbers work"))
        }
    }

    /// Opens a code session for `number` (or hands back the one still valid for the same number
    /// and purpose) and "texts" its code: the region policy and the quotas apply to real numbers;
    /// test numbers get their fixed code and no SMS.
    func openSession(number: String, purpose: SessionPurpose?, languageCode: String?,
                     endpoint: BackendOperation) throws(IdentityToolkitError) -> String {
        let now = clock.now
        let testCode: String?
        switch state.requestSession(number: number, purpose: purpose, testCode: testPhoneNumbers[number], now: now, configuration: configuration) {
        case .refuse(let error): throw reject(endpoint, error)
        case .reuse(let info):
            emit(.codeReused(phoneNumber: number))
            return info
        case .open(let fixed): testCode = fixed
        }
        let code = testCode ?? configuration.fixedSMSCode ?? Self.randomCode()
        let sessionInfo = Self.randomString(bytes: 64)
        do {
            try commit(.session(id: sessionInfo, phoneNumber: number, code: code, createdAt: now, purpose: purpose))
            if testCode == nil {
                let message = SMSMessage(phoneNumber: number, code: code, sessionInfo: sessionInfo, languageCode: languageCode,
                                         text: Self.smsText(code: code, language: languageCode), sentAt: now)
                try commit(.sms(message))
                emit(.smsSent(message))
            }
        } catch { throw reject(endpoint, error) }
        return sessionInfo
    }

    // MARK: reCAPTCHA

    /// The handler page for the SDK's query: status and HTML.
    public func recaptchaPage(query: [URLQueryItem]) async -> (status: Int, html: String) {
        switch ReCAPTCHAPage.parse(query, apiKey: configuration.apiKey, bundleID: configuration.bundleID) {
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
    public func issueRecaptchaToken(eventID: String) async throws(IdentityToolkitError) -> String {
        let token = "03A" + Self.randomString(bytes: 96)
        try await change { () throws(IdentityToolkitError) in try commit(.recaptcha(digest: Self.digest(token), eventID: eventID, issuedAt: clock.now)) }
        return token
    }

    /// The event a token was issued for, if it was issued here.
    public func recaptchaEventID(for token: String) async throws(IdentityToolkitError) -> String? {
        try await readShared()
        return state.recaptchaTokens[Self.digest(token)]?.eventID
    }

    /// Spends a reCAPTCHA token: unknown → MALFORMED; used before, or too old → EXPIRED.
    private func useRecaptchaToken(_ token: String, endpoint: BackendOperation) throws(IdentityToolkitError) {
        switch state.checkRecaptchaToken(digest: Self.digest(token), now: clock.now, lifetime: configuration.recaptchaTokenLifetime) {
        case .refuse(let error): throw reject(endpoint, error)
        case .spend(let digest):
            do { try commit(.recaptchaUsed(digest: digest)) } catch { throw reject(endpoint, error) }
        }
    }

    // MARK: signInWithPhoneNumber

    /// Checks the code for a session (or a temporary proof), then signs the number's user in
    /// (creating them on first sign-in), or with the ID token of a signed-in user links the
    /// number to them (`operation: LINK`), as the service and the Auth Emulator do
    /// (firebase-tools `operations.ts` `signInWithPhoneNumber`):
    /// - a number another account holds is not linked: the answer is 200 with `phoneNumber` and a
    ///   `temporaryProof` (the SDK's `credentialAlreadyInUse` with a credential that signs in to
    ///   that account); a temporary proof spent that way again is `PHONE_NUMBER_EXISTS`;
    /// - `operation: REAUTH` never creates a user: `USER_NOT_FOUND` for an unknown number;
    /// - a user with a second factor cannot use the number as a first factor
    ///   (`UNSUPPORTED_FIRST_FACTOR`: Firebase supports multi-factor with every provider but phone).
    public func signInWithPhoneNumber(_ request: VerifyPhoneNumberRequest) async throws(IdentityToolkitError) -> VerifyPhoneNumberResponse {
        try await signIn { () throws(IdentityToolkitError) in try decideSignInWithPhoneNumber(request) }
    }

    private func decideSignInWithPhoneNumber(_ request: VerifyPhoneNumberRequest) throws(IdentityToolkitError) -> SignInDecision<VerifyPhoneNumberResponse> {
        let endpoint = BackendOperation.signInWithPhoneNumber
        let number: String
        var proofDigest: String?
        if let proof = request.temporaryProof, !proof.isEmpty {
            switch state.checkTemporaryProof(digest: Self.digest(proof), claimedNumber: request.phoneNumber, now: clock.now,
                                             lifetime: configuration.temporaryProofLifetime) {
            case .refuse(let error): throw reject(endpoint, error)
            case .spend(let digest, let phoneNumber):
                number = phoneNumber
                proofDigest = digest
            }
        } else {
            number = try spendSession(request.sessionInfo, code: request.code, purpose: nil, endpoint: endpoint).phoneNumber
        }
        let holder = state.userByPhone[number].flatMap { state.users[$0] }
        var signedIn: BackendUser?
        if let idToken = request.idToken, !idToken.isEmpty {
            (signedIn, _) = try signedInUser(idToken, endpoint: endpoint)
        }
        if let signedIn, let holder, holder.localId != signedIn.localId {
            guard proofDigest == nil else { throw reject(endpoint, IdentityToolkitError(.phoneNumberExists)) }
            let proof = Self.randomString(bytes: 48)
            do { try commit(.temporaryProof(digest: Self.digest(proof), phoneNumber: number, at: clock.now)) } catch { throw reject(endpoint, error) }
            _ = reject(endpoint, IdentityToolkitError(.phoneNumberExists, "linking: \(number) belongs to another account; answered a temporary proof"))
            return .answer(VerifyPhoneNumberResponse(phoneNumber: number, temporaryProof: proof,
                                                     temporaryProofExpiresIn: String(Int(configuration.temporaryProofLifetime))))
        }
        var user = signedIn ?? holder
        if user == nil, request.operation == "REAUTH" {
            throw reject(endpoint, IdentityToolkitError(.userNotFound, "There is no user record for \(number) to reauthenticate."))
        }
        if let existing = user, existing.hasSecondFactor {
            throw reject(endpoint, IdentityToolkitError(
                .unsupportedFirstFactor, "A phone number cannot be set as a first factor on an SMS based MFA user."))
        }
        let isNewUser = user == nil
        do {
            if let proofDigest { try commit(.temporaryProofUsed(digest: proofDigest)) }
            if var existing = user {
                if existing.phoneNumber != number {
                    existing.phoneNumber = number
                    try commit(.user(existing))
                    user = existing
                }
            } else {
                let created = BackendUser(localId: newLocalID(hint: number), phoneNumber: number, createdAt: clock.now)
                try commit(.user(created))
                user = created
            }
        } catch { throw reject(endpoint, error) }
        guard let user else { throw reject(endpoint, IdentityToolkitError(.internal, "no user after sign-in")) }
        return .tokens(try grantTokens(for: user, provider: "phone", endpoint: endpoint)) { [emit = emitter()] tokens in
            emit(.signedIn(uid: user.localId, phoneNumber: number, isNewUser: isNewUser))
            return VerifyPhoneNumberResponse(idToken: tokens.idToken, refreshToken: tokens.refreshToken, expiresIn: tokens.expiresIn,
                                             localId: user.localId, isNewUser: isNewUser, phoneNumber: number)
        }
    }

    /// Spends a code session: it must exist for `purpose`, be unused and unexpired, have attempts
    /// left, and `code` must be its code (a wrong one counts). Returns the session, now used.
    func spendSession(_ sessionInfo: String?, code: String?, purpose: SessionPurpose?,
                      endpoint: BackendOperation) throws(IdentityToolkitError) -> BackendState.Session {
        switch state.checkCode(sessionInfo: sessionInfo, code: code, purpose: purpose, now: clock.now, configuration: configuration) {
        case .refuse(let error):
            throw reject(endpoint, error)
        case .wrongCode(let sessionInfo):
            do { try commit(.wrongCode(session: sessionInfo)) } catch { throw reject(endpoint, error) }
            throw reject(endpoint, IdentityToolkitError(.invalidCode))
        case .spend(let sessionInfo, let session):
            do { try commit(.sessionUsed(session: sessionInfo)) } catch { throw reject(endpoint, error) }
            return session
        }
    }

    /// Grants `user`, signed in with `provider`, a refresh token (sealed with its sign-in,
    /// ``RefreshTokenSeal``: nothing kept but `lastLoginAt`), and with `secondFactor` (an
    /// enrollment ID) when a second factor completed the sign-in; `claims` are a custom token's (a
    /// JSON object as text). A disabled user gets USER_DISABLED instead. Recorded in the change; the
    /// ID token is signed after it (``signIn(_:)``), so that no change waits for an RSA signature.
    func grantTokens(for user: BackendUser, provider: String, secondFactor: String? = nil, claims: String? = nil,
                     endpoint: BackendOperation) throws(IdentityToolkitError) -> TokenGrant {
        try requireEnabled(user, endpoint: endpoint)
        let now = clock.now
        let refreshToken = tokenSigner.refreshTokens.seal(localId: user.localId, userCreatedAt: user.createdAt, provider: provider,
                                                          secondFactor: secondFactor, issuedAt: now, claims: claims)
        do { try commit(.signedIn(localId: user.localId, at: now)) } catch { throw reject(endpoint, error) }
        return TokenGrant(user: user, provider: provider, secondFactor: secondFactor, refreshToken: refreshToken, issuedAt: now,
                          claims: BackendUser.claims(claims))
    }

    /// Runs a sign-in's change, then signs the ID token it granted, if any, and answers.
    ///
    /// The signature (RSA, ~0.4 ms) is made off the actor (``signToken(for:provider:secondFactor:authTime:extraClaims:now:)``):
    /// signed on it, every sign-in waited for every other's.
    func signIn<Answer>(_ decide: () throws(IdentityToolkitError) -> SignInDecision<Answer>) async throws(IdentityToolkitError) -> Answer {
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
    nonisolated func signToken(for user: BackendUser, provider: String, secondFactor: String?, authTime: Date,
                               extraClaims: [String: JSONValue], now: Date) async -> String {
        tokenSigner.token(for: user, provider: provider, secondFactor: secondFactor, authTime: authTime, extraClaims: extraClaims, now: now)
    }

    /// USER_DISABLED for a user an admin disabled: no sign-in, no refresh, no call with their ID token.
    func requireEnabled(_ user: BackendUser, endpoint: BackendOperation) throws(IdentityToolkitError) {
        if user.disabled == true {
            throw reject(endpoint, IdentityToolkitError(.userDisabled, "The user account has been disabled by an administrator."))
        }
    }

    /// The code of a session (a verification ID), as the SMS carried it.
    public func code(forSession sessionInfo: String) async throws(IdentityToolkitError) -> String? {
        try await readShared()
        return state.sessions[sessionInfo]?.code
    }

    /// The emulator's view of sent codes (`GET /emulator/v1/projects/{project}/verificationCodes`).
    public func verificationCodes() async throws(IdentityToolkitError) -> VerificationCodesResponse {
        try await readShared()
        return VerificationCodesResponse(verificationCodes: state.outbox.map {
            VerificationCode(code: $0.code, phoneNumber: $0.phoneNumber, sessionInfo: $0.sessionInfo)
        })
    }

    /// `getProjectConfig`: the project and its authorized domains (the first `firebaseapp.com`
    /// one is the auth domain the reCAPTCHA page is on).
    public nonisolated func projectConfig() -> GetProjectConfigResponse {
        GetProjectConfigResponse(projectId: configuration.projectID, authorizedDomains: configuration.authorizedDomains)
    }

    func reject(_ endpoint: BackendOperation, _ error: IdentityToolkitError, cause: RejectionCause? = nil) -> IdentityToolkitError {
        logger.info("request refused", metadata: ["endpoint": "\(endpoint)", "error": "\(error.message)"])
        emit(.rejected(endpoint: endpoint, error, cause: cause))
        return error
    }

    static func digest(_ secret: String) -> String {
        Hex.encode(SHA256.hash(data: Array(secret.utf8)))
    }

    static func smsText(code: String, language: String?) -> String {
        switch language?.prefix(2) {
        case "fr": return "\(code) est votre code de validation."
        case "de": return "\(code) ist Ihr Bestätigungscode."
        case "es": return "\(code) es tu código de verificación."
        default: return "\(code) is your verification code."
        }
    }

    /// Six random digits, as the SMS carries them (libcrypto's generator, unbiased).
    static func randomCode() -> String {
        var generator = SecureRandomGenerator()
        let digits = String(Int.random(in: 0..<1_000_000, using: &generator))
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    /// `count` random bytes in base64url: libcrypto's generator, in user space (swift-crypto's
    /// `SymmetricKey(size:)` made a getrandom call for each, 1 % of the CPU of 10,000 sign-ins).
    static func randomString(bytes count: Int) -> String {
        Base64URL.encode(SecureRandom.bytes(count))
    }
}
