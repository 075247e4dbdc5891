import APNsReceiver
import APNsWire
import Utilities
import AuthBackend
import FirebaseAuthCore
import Foundation
import IdentityToolkitAPI

/// Why a scenario file cannot be used: the file and the exact key.
package struct ScenarioFileError: CodedError {
    package enum Code: String, Sendable {
        case unreadable, notJSON, wrongFormat, unknownKey, missingKey, invalidValue, unknownScenario
    }
    package let code: Code
    package let message: String
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

/// A scenario file (`Scenarios/*.json`, format `authsim-scenario/1`): the app, the backend, the
/// network and the provider, what the user does, and the outcome the run must end with. Every
/// section and key but `format`, `name`, `summary` and `expect.outcome` is optional; unknown keys
/// are errors (a typo must not silently mean "default"). Scenarios/README.md documents each key.
package struct ScenarioSpec: Sendable {
    package static let format = "authsim-scenario/1"

    package var name: String
    package var summary: String
    package var app = AppProfile.scenarioFormat
    package var backend = BackendSpec()
    package var network = NetworkSpec()
    package var provider = ProviderSpec()
    package var user = UserSpec()
    /// A Sign in with Apple flow instead of phone sign-in (with `multiFactor`: the first factor's Apple ID).
    package var apple: AppleSpec?
    /// A phone second-factor flow (the first factor is Sign in with Apple).
    package var multiFactor: MultiFactorSpec?
    /// A sign-in on an identity provider's web page (`OAuthProvider`) instead of phone sign-in.
    package var identityProvider: IdentityProviderSpec?
    /// "signed in", "signed in via reCAPTCHA", or the SDK error it must end with ("17054 notificationNotForwarded").
    package var expectedOutcome: String
    /// A phrase `authsim explain` must use for this run's root cause (checked by the tests).
    package var expectedCause: String?

    package init(name: String, summary: String, expectedOutcome: String) {
        self.name = name
        self.summary = summary
        self.expectedOutcome = expectedOutcome
    }

    package struct BackendSpec: Sendable {
        package var suggestedTimeout = 2
        package var testPhoneNumbers: [String: String] = [:]
        package var smsRegionPolicy: SMSRegionPolicy?
        package var smsPerNumberPerDay: Int?
        package var smsPerProjectPerDay: Int?
        package var recaptcha: ReCAPTCHAOutcome = .pass
        package var codeLifetimeSeconds: Double?
        /// The phone provider's reCAPTCHA SMS defense.
        package var recaptchaEnforcement: RecaptchaEnforcement = .off
        /// The toll-fraud risk each assessment finds, and the project's threshold.
        package var tollFraudRiskScore = 0.1
        package var tollFraudThreshold = 0.5
        /// The API key's iOS-app restriction (empty: none).
        package var apiKeyIOSBundleIDs: [String] = []
        /// Answers the backend gives instead of the service's (in-process backends only).
        package var faults: [BackendFault] = []
        /// Users the project has before the run, as an admin made them (the Admin SDKs'
        /// `import_users`): a local ID, and optionally a phone number, a name, disabled.
        package var users: [UserRecord] = []
    }

    package struct NetworkSpec: Sendable {
        /// APNs' delay from acceptance to the device.
        package var pushLatencyMilliseconds = 250
        /// APNs accepts the push, but the device never gets it (offline, powered off, throttled).
        package var pushesLost = false
        /// push-receiver faults, in `push-receiver --fault` syntax.
        package var receiverFaults: [FaultRule] = []
    }

    package struct ProviderSpec: Sendable {
        /// The backend's provider token has the team ID as `kid` and the key ID as `iss`.
        package var keyAndTeamSwapped = false
        /// The backend's clock is off by this many seconds (its tokens' `iat`).
        package var clockOffsetSeconds: Double = 0
    }

    package struct AppleSpec: Sendable {
        package enum Flow: String, Sendable, CaseIterable {
            case signIn, wrongNonce, missingNonce, replayedToken, expiredToken, otherAudience, reauthenticate, reauthenticateOtherUser,
                 linkToPhoneUser, linkTakenAppleID, revokeThenDelete
        }
        package var flow: Flow = .signIn
        /// "Hide My Email": the token carries a @privaterelay.appleid.com address.
        package var hideEmail = false
        /// The simulated Apple ID that signs in.
        package var appleUser = "ada"
    }

    package struct IdentityProviderSpec: Sendable {
        /// The provider (`microsoft.com`, `yahoo.com`, `oidc.…`).
        package var providerID = "microsoft.com"
        /// What the user does on the page (nil: the backend's default, `first`).
        package var page: ProviderPageOutcome?
        /// The app's `login_hint` custom parameter.
        package var loginHint: String?
        /// Another app on the device registers the same URL scheme (a second build of the app, a
        /// sample app of the same Firebase app), and iOS opens the redirect in that one.
        package var otherAppOwnsScheme = false

        package init(providerID: String = "microsoft.com") { self.providerID = providerID }
    }

    package struct MultiFactorSpec: Sendable {
        package enum Flow: String, Sendable, CaseIterable {
            /// A user signed in with Apple enrolls a phone as second factor.
            case enroll
            /// A user with a phone second factor signs in with Apple, then the second factor.
            case signIn
            /// A user with a second factor signs in by phone (the guide's snippet's first factor).
            case phoneFirstFactor
        }
        package var flow: Flow = .signIn
        /// The second factor's number (nil: `user.phoneNumber`).
        package var secondFactor: String?
        package var displayName = "Phone"
        /// How long the user leaves the second-factor prompt before asking for the code (the
        /// backend's clock jumps ahead; the first factor's pending credential lives 10 minutes).
        package var startAfterSeconds: Double = 0
    }

    package struct UserSpec: Sendable {
        package var phoneNumber = "+16505551234"
        package enum Code: Sendable, Hashable { case fromSMS, wrong, fixed(String) }
        package var code: Code = .fromSMS
        /// How long the user takes to type the code (the backend's clock jumps ahead by this much).
        package var codeEnteredAfterSeconds: Double = 0
    }
}

extension ScenarioSpec {
    /// Reads and checks a scenario file.
    package init(contentsOf url: URL) throws(ScenarioFileError) {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw ScenarioFileError(.unreadable, "cannot read \(url.path): \(error.localizedDescription)")
        }
        try self.init(json: data, source: url.lastPathComponent)
    }

    /// Reads and checks a scenario from its JSON text; `source` names it in errors.
    package init(json data: Data, source: String) throws(ScenarioFileError) {
        let file = try ScenarioFileModel.decode(data, source: source)
        let root = FieldPath(source)
        guard file.format == Self.format else {
            throw ScenarioFileError(.wrongFormat, "\(source): format is \(file.format ?? "missing"); this authsim reads \(Self.format)")
        }
        guard let name = file.name, !name.isEmpty else { throw root.missing("name") }
        guard let summary = file.summary else { throw root.missing("summary") }
        guard let outcome = file.expect?.outcome else { throw root.missing("expect.outcome") }
        self.init(name: name, summary: summary, expectedOutcome: outcome)
        expectedCause = file.expect?.cause

        if let app = file.app {
            self.app.bundleID = app.bundleID ?? self.app.bundleID
            self.app.googleAppID = app.googleAppID ?? self.app.googleAppID
            self.app.urlSchemes = app.urlSchemes
            if let build = app.build { self.app.build = build.build }
            if let type = app.declaredTokenType {
                self.app.declaredTokenType = switch type { case .sandbox: .sandbox; case .prod: .prod; case .unknown: .unknown }
            }
            if let aps = app.provisioningProfile, aps != .none { self.app.provisioningProfile = .signed(apsEnvironment: aps.rawValue) }
            self.app.isSimulator = app.simulator ?? false
            self.app.forwardsNotifications = app.forwardsNotifications ?? true
            self.app.forwardsURLs = app.forwardsURLs ?? true
            self.app.appVerificationDisabledForTesting = app.appVerificationDisabledForTesting ?? false
            self.app.languageCode = app.languageCode
            self.app.restartAfterSMS = app.restartAfterSMS ?? false
            self.app.recaptchaEnterprise = app.recaptchaEnterprise?.value ?? .notLinked
            self.app.killedBeforePush = app.killedBeforePush ?? false
            self.app.apnsRegistration = app.apnsRegistration?.value ?? .atLaunch
        }
        if let backend = file.backend {
            let path = root.appending("backend")
            self.backend.suggestedTimeout = try path.int(backend.suggestedTimeout, "suggestedTimeout", in: 0...600) ?? 2
            self.backend.testPhoneNumbers = backend.testPhoneNumbers ?? [:]
            if let policy = backend.smsRegionPolicy {
                switch (policy.allowOnly, policy.deny) {
                case (let allow?, nil): self.backend.smsRegionPolicy = .allowlistOnly(allow)
                case (nil, let deny?): self.backend.smsRegionPolicy = .allowByDefault(disallowed: deny)
                default: throw ScenarioFileError(.invalidValue, "\(path.appending("smsRegionPolicy")): give allowOnly or deny (region codes), not both")
                }
            }
            self.backend.smsPerNumberPerDay = try path.int(backend.smsPerNumberPerDay, "smsPerNumberPerDay", in: 0...10_000)
            self.backend.smsPerProjectPerDay = try path.int(backend.smsPerProjectPerDay, "smsPerProjectPerDay", in: 0...1_000_000)
            if let outcome = backend.recaptcha {
                do { self.backend.recaptcha = try ReCAPTCHAOutcome(argument: outcome) } catch {
                    throw ScenarioFileError(.invalidValue, "\(path.appending("recaptcha")): \(error.detail ?? error.code.rawValue)")
                }
            }
            self.backend.codeLifetimeSeconds = try path.number(backend.codeLifetimeSeconds, "codeLifetimeSeconds", in: 1...86_400)
            self.backend.recaptchaEnforcement = backend.recaptchaEnforcement?.value ?? .off
            self.backend.tollFraudRiskScore = try path.number(backend.tollFraudRiskScore, "tollFraudRiskScore", in: 0...1) ?? 0.1
            self.backend.tollFraudThreshold = try path.number(backend.tollFraudThreshold, "tollFraudThreshold", in: 0...1) ?? 0.5
            self.backend.apiKeyIOSBundleIDs = backend.apiKeyIOSBundleIDs ?? []
            for (index, user) in (backend.users ?? []).enumerated() {
                guard let localId = user.localId, !localId.isEmpty else { throw path.appending("users[\(index)]").missing("localId") }
                self.backend.users.append(UserRecord(localId: localId, displayName: user.displayName, phoneNumber: user.phoneNumber,
                                                     disabled: user.disabled))
            }
            for (index, fault) in (backend.faults ?? []).enumerated() {
                let at = path.appending("faults[\(index)]")
                guard let endpoint = fault.endpoint, !endpoint.isEmpty else { throw at.missing("endpoint") }
                let status = try at.int(fault.status, "status", in: 100...599) ?? 400
                let times = try at.int(fault.times, "times", in: 1...1000) ?? 1
                switch (fault.message, fault.body) {
                case (let message?, nil):
                    self.backend.faults.append(.error(message, status: status, reason: fault.reason, on: endpoint, times: times))
                case (nil, let body?):
                    self.backend.faults.append(.raw(status: status, body: body, on: endpoint, times: times))
                default:
                    throw ScenarioFileError(.invalidValue, "\(at) needs message (an error envelope) or body (sent as it is), not both or neither")
                }
            }
            var check = BackendConfiguration()
            check.testPhoneNumbers = self.backend.testPhoneNumbers
            do { _ = try check.validated() } catch {
                throw ScenarioFileError(.invalidValue, "\(path.appending("testPhoneNumbers")): \(error.detail ?? error.code.rawValue)")
            }
        }
        if let network = file.network {
            let path = root.appending("network")
            self.network.pushLatencyMilliseconds = try path.int(network.pushLatencyMs, "pushLatencyMs", in: 0...120_000) ?? 250
            self.network.pushesLost = network.pushesLost ?? false
            for spec in network.receiverFaults ?? [] {
                do { self.network.receiverFaults.append(try FaultRule(parsing: spec)) } catch {
                    throw ScenarioFileError(.invalidValue, "\(path.appending("receiverFaults")): \(error.message)")
                }
            }
        }
        if let provider = file.provider {
            self.provider.keyAndTeamSwapped = provider.keyAndTeamSwapped ?? false
            self.provider.clockOffsetSeconds = try root.appending("provider").number(provider.clockOffsetSeconds, "clockOffsetSeconds", in: -86_400...86_400) ?? 0
        }
        if let apple = file.apple {
            var spec = AppleSpec()
            spec.flow = apple.flow?.value ?? .signIn
            spec.hideEmail = apple.hideEmail ?? false
            spec.appleUser = apple.appleUser ?? "ada"
            self.apple = spec
        }
        if let identityProvider = file.identityProvider {
            var spec = IdentityProviderSpec()
            spec.providerID = identityProvider.id ?? spec.providerID
            if let page = identityProvider.page {
                do { spec.page = try ProviderPageOutcome(argument: page) } catch {
                    throw ScenarioFileError(.invalidValue, "\(root.appending("identityProvider").appending("page")): \(error.detail ?? error.code.rawValue)")
                }
            }
            spec.loginHint = identityProvider.loginHint
            spec.otherAppOwnsScheme = identityProvider.otherAppOwnsScheme ?? false
            self.identityProvider = spec
        }
        if let multiFactor = file.multiFactor {
            var spec = MultiFactorSpec()
            spec.flow = multiFactor.flow?.value ?? .signIn
            spec.secondFactor = multiFactor.secondFactor
            spec.displayName = multiFactor.displayName ?? spec.displayName
            spec.startAfterSeconds = try root.appending("multiFactor").number(multiFactor.startAfterSeconds, "startAfterSeconds", in: 0...86_400) ?? 0
            self.multiFactor = spec
        }
        if let user = file.user {
            let path = root.appending("user")
            self.user.phoneNumber = user.phoneNumber ?? self.user.phoneNumber
            switch user.code {
            case nil, "sms": self.user.code = .fromSMS
            case "wrong": self.user.code = .wrong
            case let digits? where digits.count == 6 && digits.allSatisfy({ $0.isASCII && $0.isNumber }): self.user.code = .fixed(digits)
            case let other?: throw ScenarioFileError(.invalidValue, "\(path.appending("code")) is sms, wrong or 6 digits, not \(other)")
            }
            self.user.codeEnteredAfterSeconds = try path.number(user.codeEnteredAfterSeconds, "codeEnteredAfterSeconds", in: 0...86_400) ?? 0
        }
    }

    /// Every scenario file in `directory`, sorted by file name.
    package static func load(directory: URL) throws(ScenarioFileError) -> [ScenarioSpec] {
        let files: [URL]
        do {
            files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
                .filter { $0.pathExtension == "json" }.sorted { $0.lastPathComponent < $1.lastPathComponent }
        } catch {
            throw ScenarioFileError(.unreadable, "cannot list \(directory.path): \(error.localizedDescription)")
        }
        var specs: [ScenarioSpec] = []
        for file in files {
            let spec = try ScenarioSpec(contentsOf: file)
            if specs.contains(where: { $0.name == spec.name }) {
                throw ScenarioFileError(.invalidValue, "\(file.lastPathComponent): another file is also named \(spec.name)")
            }
            specs.append(spec)
        }
        return specs
    }
}

/// Where a value sits in a scenario file (`bad.json.backend.faults[0]`), for the rules that the
/// decoding alone does not state: ranges, whole numbers, keys one of which must be given.
struct FieldPath: CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }

    func appending(_ key: String) -> FieldPath { FieldPath("\(description).\(key)") }

    func missing(_ key: String) -> ScenarioFileError { ScenarioFileError(.missingKey, "\(description) has no \(key)") }

    func number(_ value: Double?, _ key: String, in range: ClosedRange<Double>) throws(ScenarioFileError) -> Double? {
        guard let value else { return nil }
        guard range.contains(value) else {
            throw ScenarioFileError(.invalidValue, "\(appending(key)) must be a number in \(range.lowerBound)…\(range.upperBound), not \(value)")
        }
        return value
    }

    func int(_ value: Double?, _ key: String, in range: ClosedRange<Int>) throws(ScenarioFileError) -> Int? {
        guard let number = try number(value, key, in: Double(range.lowerBound)...Double(range.upperBound)) else { return nil }
        guard number == number.rounded() else { throw ScenarioFileError(.invalidValue, "\(appending(key)) must be a whole number, not \(number)") }
        return Int(number)
    }
}
