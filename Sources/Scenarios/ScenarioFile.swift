import APNsReceiver
import APNsWire
import Utilities
import AuthBackend
import FirebaseAuthCore
import Foundation
import IdentityToolkitAPI

/// Why a scenario file cannot be used: the file and the exact key.
public struct ScenarioFileError: CodedError {
    public enum Code: String, Sendable {
        case unreadable, notJSON, wrongFormat, unknownKey, missingKey, invalidValue, unknownScenario
    }
    public let code: Code
    public let message: String
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

/// A scenario file (`Scenarios/*.json`, format `authsim-scenario/1`): the app, the backend, the
/// network and the provider, what the user does, and the outcome the run must end with. Every
/// section and key but `format`, `name`, `summary` and `expect.outcome` is optional; unknown keys
/// are errors (a typo must not silently mean "default"). Scenarios/README.md documents each key.
public struct ScenarioSpec: Sendable {
    public static let format = "authsim-scenario/1"

    public var name: String
    public var summary: String
    public var app = AppSpec()
    public var backend = BackendSpec()
    public var network = NetworkSpec()
    public var provider = ProviderSpec()
    public var user = UserSpec()
    /// A Sign in with Apple flow instead of phone sign-in (with `multiFactor`: the first factor's Apple ID).
    public var apple: AppleSpec?
    /// A phone second-factor flow (the first factor is Sign in with Apple).
    public var multiFactor: MultiFactorSpec?
    /// "signed in", "signed in via reCAPTCHA", or the SDK error it must end with ("17054 notificationNotForwarded").
    public var expectedOutcome: String
    /// A phrase `authsim explain` must use for this run's root cause (checked by the tests).
    public var expectedCause: String?

    public init(name: String, summary: String, expectedOutcome: String) {
        self.name = name
        self.summary = summary
        self.expectedOutcome = expectedOutcome
    }

    public struct AppSpec: Sendable {
        public var bundleID = BackendConfiguration().bundleID
        public var googleAppID = "1:123456789012:ios:a1b2c3d4e5f60718"
        /// `CFBundleURLSchemes` (nil: the encoded app ID).
        public var urlSchemes: [String]?
        /// `debug` builds get sandbox tokens; `release` (TestFlight, App Store, ad hoc) production ones.
        public var build: APNsEnvironment = .sandbox
        /// What the app's code passes to `setAPNSToken(_:type:)`.
        public var declaredTokenType: AuthAPNSTokenType = .sandbox
        /// `embedded.mobileprovision`'s `aps-environment` (`development`, `production`), or nil for none.
        public var provisioningProfile: String?
        public var simulator = false
        public var forwardsNotifications = true
        public var forwardsURLs = true
        /// `auth.settings.isAppVerificationDisabledForTesting`.
        public var testMode = false
        public var languageCode: String?
        /// The app is killed after the SMS and started again; it restores the verification ID from UserDefaults.
        public var restartAfterSMS = false
        /// Whether the app links the RecaptchaEnterprise SDK (SMS defense in AUDIT or ENFORCE needs it).
        public var recaptchaEnterprise: RecaptchaEnterpriseLinkage = .notLinked
        /// How the app gets its APNs token.
        public var apnsRegistration: APNsRegistration = .atLaunch
        /// iOS kills the app after verifyClient answered and before the push: the push starts it
        /// again, and the user asks for the code once more.
        public var killedBeforePush = false
    }

    /// How the app registers for remote notifications, and what the OS answers.
    public enum APNsRegistration: String, Sendable, CaseIterable {
        /// The app registers at launch; its delegate passes the token to `setAPNSToken(_:type:)`.
        case atLaunch
        /// The app never registers: the SDK does when it needs a token, and the delegate passes it on.
        case whenAuthAsks
        /// The build lacks the `aps-environment` entitlement: registration fails, and the SDK's
        /// app-delegate proxy tells Auth at once.
        case fails
        /// The OS never answers (the device cannot reach APNs): the SDK waits its 5 s.
        case neverAnswers
    }

    /// How an app carries the RecaptchaEnterprise SDK.
    public enum RecaptchaEnterpriseLinkage: String, Sendable, CaseIterable {
        /// Not in the app (most apps): AUDIT and ENFORCE fail with 17208.
        case notLinked
        /// Linked, and Google's reCAPTCHA service answers it.
        case linked
        /// Linked, but an old version without `RCAAction` (17210).
        case noActionClass
        /// Linked, but the service cannot be reached: every token is `NO_RECAPTCHA`.
        case unreachable
    }

    public struct BackendSpec: Sendable {
        public var suggestedTimeout = 2
        public var testPhoneNumbers: [String: String] = [:]
        public var smsRegionPolicy: SMSRegionPolicy?
        public var smsPerNumberPerDay: Int?
        public var smsPerProjectPerDay: Int?
        public var recaptcha: ReCAPTCHAOutcome = .pass
        public var codeLifetimeSeconds: Double?
        /// The phone provider's reCAPTCHA SMS defense.
        public var recaptchaEnforcement: RecaptchaEnforcement = .off
        /// The toll-fraud risk each assessment finds, and the project's threshold.
        public var tollFraudRiskScore = 0.1
        public var tollFraudThreshold = 0.5
        /// The API key's iOS-app restriction (empty: none).
        public var apiKeyIOSBundleIDs: [String] = []
        /// Answers the backend gives instead of the service's (in-process backends only).
        public var faults: [BackendFault] = []
        /// Users the project has before the run, as an admin made them (the Admin SDKs'
        /// `import_users`): a local ID, and optionally a phone number, a name, disabled.
        public var users: [UserRecord] = []
    }

    public struct NetworkSpec: Sendable {
        /// APNs' delay from acceptance to the device.
        public var pushLatencyMilliseconds = 250
        /// APNs accepts the push, but the device never gets it (offline, powered off, throttled).
        public var pushesLost = false
        /// push-receiver faults, in `push-receiver --fault` syntax.
        public var receiverFaults: [FaultRule] = []
    }

    public struct ProviderSpec: Sendable {
        /// The backend's provider token has the team ID as `kid` and the key ID as `iss`.
        public var keyAndTeamSwapped = false
        /// The backend's clock is off by this many seconds (its tokens' `iat`).
        public var clockOffsetSeconds: Double = 0
    }

    public struct AppleSpec: Sendable {
        public enum Flow: String, Sendable, CaseIterable {
            case signIn, wrongNonce, missingNonce, replayedToken, expiredToken, otherAudience, reauthenticate, reauthenticateOtherUser,
                 linkToPhoneUser, linkTakenAppleID, revokeThenDelete
        }
        public var flow: Flow = .signIn
        /// "Hide My Email": the token carries a @privaterelay.appleid.com address.
        public var hideEmail = false
        /// The simulated Apple ID that signs in.
        public var appleUser = "ada"
    }

    public struct MultiFactorSpec: Sendable {
        public enum Flow: String, Sendable, CaseIterable {
            /// A user signed in with Apple enrolls a phone as second factor.
            case enroll
            /// A user with a phone second factor signs in with Apple, then the second factor.
            case signIn
            /// A user with a second factor signs in by phone (the guide's snippet's first factor).
            case phoneFirstFactor
        }
        public var flow: Flow = .signIn
        /// The second factor's number (nil: `user.phoneNumber`).
        public var secondFactor: String?
        public var displayName = "Phone"
        /// How long the user leaves the second-factor prompt before asking for the code (the
        /// backend's clock jumps ahead; the first factor's pending credential lives 10 minutes).
        public var startAfterSeconds: Double = 0
    }

    public struct UserSpec: Sendable {
        public var phoneNumber = "+16505551234"
        public enum Code: Sendable, Hashable { case fromSMS, wrong, fixed(String) }
        public var code: Code = .fromSMS
        /// How long the user takes to type the code (the backend's clock jumps ahead by this much).
        public var codeEnteredAfterSeconds: Double = 0
    }
}

extension ScenarioSpec {
    /// Reads and checks a scenario file.
    public init(contentsOf url: URL) throws(ScenarioFileError) {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw ScenarioFileError(.unreadable, "cannot read \(url.path): \(error.localizedDescription)")
        }
        try self.init(json: data, source: url.lastPathComponent)
    }

    /// Reads and checks a scenario from its JSON text; `source` names it in errors.
    public init(json data: Data, source: String) throws(ScenarioFileError) {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw ScenarioFileError(.notJSON, "\(source) is not a JSON object")
        }
        let root = JSONSection(object, path: source)
        let format = try root.string("format")
        guard format == Self.format else {
            throw ScenarioFileError(.wrongFormat, "\(source): format is \(format ?? "missing"); this authsim reads \(Self.format)")
        }
        guard let name = try root.string("name"), !name.isEmpty else { throw root.missing("name") }
        guard let summary = try root.string("summary") else { throw root.missing("summary") }
        guard let expect = try root.section("expect"), let outcome = try expect.string("outcome") else { throw root.missing("expect.outcome") }
        self.init(name: name, summary: summary, expectedOutcome: outcome)
        expectedCause = try expect.string("cause")
        try expect.finish()

        if let app = try root.section("app") {
            self.app.bundleID = try app.string("bundleID") ?? self.app.bundleID
            self.app.googleAppID = try app.string("googleAppID") ?? self.app.googleAppID
            self.app.urlSchemes = try app.strings("urlSchemes")
            if let build = try app.choice("build", ["debug", "release"]) { self.app.build = build == "debug" ? .sandbox : .production }
            if let type = try app.choice("declaredTokenType", ["sandbox", "prod", "unknown"]) {
                self.app.declaredTokenType = ["sandbox": .sandbox, "prod": .prod, "unknown": .unknown][type]!
            }
            self.app.provisioningProfile = try app.choice("provisioningProfile", ["development", "production", "none"])
                .flatMap { $0 == "none" ? nil : $0 }
            self.app.simulator = try app.bool("simulator") ?? false
            self.app.forwardsNotifications = try app.bool("forwardsNotifications") ?? true
            self.app.forwardsURLs = try app.bool("forwardsURLs") ?? true
            self.app.testMode = try app.bool("appVerificationDisabledForTesting") ?? false
            self.app.languageCode = try app.string("languageCode")
            self.app.restartAfterSMS = try app.bool("restartAfterSMS") ?? false
            if let linkage = try app.choice("recaptchaEnterprise", RecaptchaEnterpriseLinkage.allCases.map(\.rawValue)) {
                self.app.recaptchaEnterprise = RecaptchaEnterpriseLinkage(rawValue: linkage)!
            }
            self.app.killedBeforePush = try app.bool("killedBeforePush") ?? false
            if let registration = try app.choice("apnsRegistration", APNsRegistration.allCases.map(\.rawValue)) {
                self.app.apnsRegistration = APNsRegistration(rawValue: registration)!
            }
            try app.finish()
        }
        if let backend = try root.section("backend") {
            self.backend.suggestedTimeout = try backend.int("suggestedTimeout", in: 0...600) ?? 2
            self.backend.testPhoneNumbers = try backend.stringMap("testPhoneNumbers") ?? [:]
            if let policy = try backend.section("smsRegionPolicy") {
                let allow = try policy.strings("allowOnly")
                let deny = try policy.strings("deny")
                switch (allow, deny) {
                case (let allow?, nil): self.backend.smsRegionPolicy = .allowlistOnly(allow)
                case (nil, let deny?): self.backend.smsRegionPolicy = .allowByDefault(disallowed: deny)
                default: throw ScenarioFileError(.invalidValue, "\(policy.path): give allowOnly or deny (region codes), not both")
                }
                try policy.finish()
            }
            self.backend.smsPerNumberPerDay = try backend.int("smsPerNumberPerDay", in: 0...10_000)
            self.backend.smsPerProjectPerDay = try backend.int("smsPerProjectPerDay", in: 0...1_000_000)
            if let outcome = try backend.string("recaptcha") {
                do { self.backend.recaptcha = try ReCAPTCHAOutcome(argument: outcome) } catch {
                    throw ScenarioFileError(.invalidValue, "\(backend.path).recaptcha: \(error.detail ?? error.code.rawValue)")
                }
            }
            self.backend.codeLifetimeSeconds = try backend.double("codeLifetimeSeconds", in: 1...86_400)
            if let state = try backend.choice("recaptchaEnforcement", RecaptchaEnforcement.allCases.map(\.rawValue)) {
                self.backend.recaptchaEnforcement = RecaptchaEnforcement(rawValue: state)!
            }
            self.backend.tollFraudRiskScore = try backend.double("tollFraudRiskScore", in: 0...1) ?? 0.1
            self.backend.tollFraudThreshold = try backend.double("tollFraudThreshold", in: 0...1) ?? 0.5
            self.backend.apiKeyIOSBundleIDs = try backend.strings("apiKeyIOSBundleIDs") ?? []
            for user in try backend.sections("users") ?? [] {
                guard let localId = try user.string("localId"), !localId.isEmpty else { throw user.missing("localId") }
                let record = UserRecord(localId: localId, displayName: try user.string("displayName"), phoneNumber: try user.string("phoneNumber"),
                                        disabled: try user.bool("disabled"))
                try user.finish()
                self.backend.users.append(record)
            }
            for fault in try backend.sections("faults") ?? [] {
                guard let endpoint = try fault.string("endpoint"), !endpoint.isEmpty else { throw fault.missing("endpoint") }
                let status = try fault.int("status", in: 100...599) ?? 400
                let times = try fault.int("times", in: 1...1000) ?? 1
                let message = try fault.string("message")
                let body = try fault.string("body")
                let reason = try fault.string("reason")
                try fault.finish()
                switch (message, body) {
                case (let message?, nil):
                    self.backend.faults.append(.error(message, status: status, reason: reason, on: endpoint, times: times))
                case (nil, let body?):
                    self.backend.faults.append(.raw(status: status, body: body, on: endpoint, times: times))
                default:
                    throw ScenarioFileError(.invalidValue, "\(fault.path) needs message (an error envelope) or body (sent as it is), not both or neither")
                }
            }
            try backend.finish()
            var check = BackendConfiguration()
            check.testPhoneNumbers = self.backend.testPhoneNumbers
            do { _ = try check.validated() } catch {
                throw ScenarioFileError(.invalidValue, "\(backend.path).testPhoneNumbers: \(error.detail ?? error.code.rawValue)")
            }
        }
        if let network = try root.section("network") {
            self.network.pushLatencyMilliseconds = try network.int("pushLatencyMs", in: 0...120_000) ?? 250
            self.network.pushesLost = try network.bool("pushesLost") ?? false
            for spec in try network.strings("receiverFaults") ?? [] {
                do { self.network.receiverFaults.append(try FaultRule(parsing: spec)) } catch {
                    throw ScenarioFileError(.invalidValue, "\(network.path).receiverFaults: \(error.message)")
                }
            }
            try network.finish()
        }
        if let provider = try root.section("provider") {
            self.provider.keyAndTeamSwapped = try provider.bool("keyAndTeamSwapped") ?? false
            self.provider.clockOffsetSeconds = try provider.double("clockOffsetSeconds", in: -86_400...86_400) ?? 0
            try provider.finish()
        }
        if let apple = try root.section("apple") {
            var spec = AppleSpec()
            if let flow = try apple.choice("flow", AppleSpec.Flow.allCases.map(\.rawValue)) { spec.flow = AppleSpec.Flow(rawValue: flow)! }
            spec.hideEmail = try apple.bool("hideEmail") ?? false
            spec.appleUser = try apple.string("appleUser") ?? "ada"
            try apple.finish()
            self.apple = spec
        }
        if let multiFactor = try root.section("multiFactor") {
            var spec = MultiFactorSpec()
            if let flow = try multiFactor.choice("flow", MultiFactorSpec.Flow.allCases.map(\.rawValue)) {
                spec.flow = MultiFactorSpec.Flow(rawValue: flow)!
            }
            spec.secondFactor = try multiFactor.string("secondFactor")
            spec.displayName = try multiFactor.string("displayName") ?? spec.displayName
            spec.startAfterSeconds = try multiFactor.double("startAfterSeconds", in: 0...86_400) ?? 0
            try multiFactor.finish()
            self.multiFactor = spec
        }
        if let user = try root.section("user") {
            self.user.phoneNumber = try user.string("phoneNumber") ?? self.user.phoneNumber
            switch try user.string("code") {
            case nil, "sms": self.user.code = .fromSMS
            case "wrong": self.user.code = .wrong
            case let digits? where digits.count == 6 && digits.allSatisfy({ $0.isASCII && $0.isNumber }): self.user.code = .fixed(digits)
            case let other?: throw ScenarioFileError(.invalidValue, "\(user.path).code is sms, wrong or 6 digits, not \(other)")
            }
            self.user.codeEnteredAfterSeconds = try user.double("codeEnteredAfterSeconds", in: 0...86_400) ?? 0
            try user.finish()
        }
        try root.finish()
    }

    /// Every scenario file in `directory`, sorted by file name.
    public static func load(directory: URL) throws(ScenarioFileError) -> [ScenarioSpec] {
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

/// One JSON object of a scenario file: typed reads with the key's path in every error, and a
/// final check that no key was left unread.
final class JSONSection {
    let object: [String: Any]
    let path: String
    private var read: Set<String> = []

    init(_ object: [String: Any], path: String) {
        self.object = object
        self.path = path
    }

    private func value(_ key: String) -> Any? {
        read.insert(key)
        if object[key] is NSNull { return nil }
        return object[key]
    }

    private func wrong(_ key: String, _ expected: String) -> ScenarioFileError {
        ScenarioFileError(.invalidValue, "\(path).\(key) must be \(expected), not \(object[key].map { "\($0)" } ?? "null")")
    }

    func missing(_ key: String) -> ScenarioFileError { ScenarioFileError(.missingKey, "\(path) has no \(key)") }

    func string(_ key: String) throws(ScenarioFileError) -> String? {
        guard let raw = value(key) else { return nil }
        guard let text = raw as? String else { throw wrong(key, "a string") }
        return text
    }

    func choice(_ key: String, _ allowed: [String]) throws(ScenarioFileError) -> String? {
        guard let text = try string(key) else { return nil }
        guard allowed.contains(text) else { throw wrong(key, allowed.joined(separator: ", ")) }
        return text
    }

    func bool(_ key: String) throws(ScenarioFileError) -> Bool? {
        guard let raw = value(key) else { return nil }
        guard let number = raw as? NSNumber, Self.isBoolean(number) else { throw wrong(key, "true or false") }
        return number.boolValue
    }

    func double(_ key: String, in range: ClosedRange<Double>) throws(ScenarioFileError) -> Double? {
        guard let raw = value(key) else { return nil }
        guard let number = raw as? NSNumber, !Self.isBoolean(number), range.contains(number.doubleValue) else {
            throw wrong(key, "a number in \(range.lowerBound)…\(range.upperBound)")
        }
        return number.doubleValue
    }

    func int(_ key: String, in range: ClosedRange<Int>) throws(ScenarioFileError) -> Int? {
        guard let number = try double(key, in: Double(range.lowerBound)...Double(range.upperBound)) else { return nil }
        guard number == number.rounded() else { throw wrong(key, "a whole number") }
        return Int(number)
    }

    func strings(_ key: String) throws(ScenarioFileError) -> [String]? {
        guard let raw = value(key) else { return nil }
        guard let list = raw as? [String] else { throw wrong(key, "a list of strings") }
        return list
    }

    func stringMap(_ key: String) throws(ScenarioFileError) -> [String: String]? {
        guard let raw = value(key) else { return nil }
        guard let map = raw as? [String: String] else { throw wrong(key, "an object of strings") }
        return map
    }

    /// JSONSerialization gives NSNumber for numbers and Booleans alike; only the `true`/`false`
    /// literals have the `char` type.
    static func isBoolean(_ number: NSNumber) -> Bool { String(cString: number.objCType) == "c" }

    /// A list of objects, each a section of its own (`key[0]`, `key[1]`, …).
    func sections(_ key: String) throws(ScenarioFileError) -> [JSONSection]? {
        guard let raw = value(key) else { return nil }
        guard let list = raw as? [[String: Any]] else { throw wrong(key, "a list of objects") }
        return list.enumerated().map { JSONSection($0.element, path: "\(path).\(key)[\($0.offset)]") }
    }

    func section(_ key: String) throws(ScenarioFileError) -> JSONSection? {
        guard let raw = value(key) else { return nil }
        guard let object = raw as? [String: Any] else { throw wrong(key, "an object") }
        return JSONSection(object, path: "\(path).\(key)")
    }

    /// Every key must have been read.
    func finish() throws(ScenarioFileError) {
        let unknown = Set(object.keys).subtracting(read).sorted()
        guard unknown.isEmpty else {
            throw ScenarioFileError(.unknownKey, "\(path): unknown key\(unknown.count > 1 ? "s" : "") \(unknown.joined(separator: ", ")) (Scenarios/README.md lists the keys)")
        }
    }
}
