import Foundation
import IdentityToolkitAPI
import Utilities

// A scenario file as it is written (format authsim-scenario/1), decoded by Codable. Every field
// is optional here; ``ScenarioSpec/init(json:source:)`` applies the defaults and the rules that
// span fields. A key no section has is an error (a typo must not silently mean "default"), found
// while decoding: each section's keys are its stored properties.

/// A section of a scenario file: its keys are its properties' names, and any other key in the
/// file is refused while decoding.
protocol ScenarioFileSection: Decodable {
    init()
}

extension ScenarioFileSection {
    /// The keys this section takes: the names of its stored properties.
    static var keys: Set<String> { Set(Mirror(reflecting: Self()).children.compactMap(\.label)) }

    /// Decodes the section at `decoder`, refusing a key it does not have.
    static func strictly(from decoder: any Decoder) throws -> Self {
        let present = try decoder.container(keyedBy: FileKey.self).allKeys.map(\.stringValue)
        let unknown = present.filter { !keys.contains($0) }.sorted()
        guard unknown.isEmpty else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "\(ScenarioFileModel.unknownKeys)\(unknown.joined(separator: ", "))"))
        }
        return try Self(from: decoder)
    }
}

/// A value of a scenario file taken from a fixed list: anything else names the list.
protocol ScenarioFileChoice: RawRepresentable, CaseIterable, Decodable where RawValue == String {}

extension ScenarioFileChoice {
    init(from decoder: any Decoder) throws { self = try Choice<Self>(from: decoder).value }
}

struct FileKey: CodingKey {
    let stringValue: String
    init(stringValue: String) { self.stringValue = stringValue }
    var intValue: Int? { nil }
    init?(intValue: Int) { nil }
}

extension KeyedDecodingContainer {
    /// A nested section: strictly (synthesized `Decodable` calls this for a section's optional
    /// sections, in preference to the general method).
    func decodeIfPresent<T: ScenarioFileSection>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        return try T.strictly(from: superDecoder(forKey: key))
    }

    /// A list of sections, each strictly.
    func decodeIfPresent<T: ScenarioFileSection>(_ type: [T].Type, forKey key: Key) throws -> [T]? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        guard var list = try? nestedUnkeyedContainer(forKey: key) else {
            throw DecodingError.typeMismatch([T].self, .init(codingPath: codingPath + [key], debugDescription: "a list of objects"))
        }
        var items: [T] = []
        while !list.isAtEnd { items.append(try T.strictly(from: list.superDecoder())) }
        return items
    }

    /// A list of strings.
    func decodeIfPresent(_ type: [String].Type, forKey key: Key) throws -> [String]? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        guard var list = try? nestedUnkeyedContainer(forKey: key) else {
            throw DecodingError.typeMismatch([String].self, .init(codingPath: codingPath + [key], debugDescription: "a list of strings"))
        }
        var items: [String] = []
        while !list.isAtEnd { items.append(try list.decode(String.self)) }
        return items
    }
}

/// The file, key for key (Scenarios/README.md documents each).
struct ScenarioFileModel: ScenarioFileSection {
    static let unknownKeys = "unknown keys: "

    var format: String?
    var name: String?
    var summary: String?
    var expect: Expect?
    var app: App?
    var backend: Backend?
    var network: Network?
    var provider: Provider?
    var apple: Apple?
    var identityProvider: IdentityProvider?
    var multiFactor: MultiFactor?
    var user: User?

    struct Expect: ScenarioFileSection {
        var outcome: String?
        var cause: String?
    }

    struct App: ScenarioFileSection {
        /// ``AppProfile/Build``, as the file spells it.
        enum Build: String, ScenarioFileChoice {
            case debug, release
            var build: AppProfile.Build { self == .debug ? .debug : .release }
        }
        enum TokenType: String, ScenarioFileChoice { case sandbox, prod, unknown }
        enum Profile: String, ScenarioFileChoice { case development, production, none }
        var bundleID: String?
        var googleAppID: String?
        var urlSchemes: [String]?
        var build: Build?
        var declaredTokenType: TokenType?
        var provisioningProfile: Profile?
        var simulator: Bool?
        var forwardsNotifications: Bool?
        var forwardsURLs: Bool?
        var appVerificationDisabledForTesting: Bool?
        var languageCode: String?
        var restartAfterSMS: Bool?
        var recaptchaEnterprise: Choice<AppProfile.RecaptchaEnterpriseLinkage>?
        var killedBeforePush: Bool?
        var apnsRegistration: Choice<AppProfile.APNsRegistration>?
    }

    struct Backend: ScenarioFileSection {
        struct RegionPolicy: ScenarioFileSection {
            var allowOnly: [String]?
            var deny: [String]?
        }
        struct User: ScenarioFileSection {
            var localId: String?
            var displayName: String?
            var phoneNumber: String?
            var disabled: Bool?
        }
        struct Fault: ScenarioFileSection {
            var endpoint: String?
            var status: Double?
            var times: Double?
            var message: String?
            var body: String?
            var reason: String?
        }
        var suggestedTimeout: Double?
        var testPhoneNumbers: [String: String]?
        var smsRegionPolicy: RegionPolicy?
        var smsPerNumberPerDay: Double?
        var smsPerProjectPerDay: Double?
        var recaptcha: String?
        var codeLifetimeSeconds: Double?
        var recaptchaEnforcement: Choice<RecaptchaEnforcement>?
        var tollFraudRiskScore: Double?
        var tollFraudThreshold: Double?
        var apiKeyIOSBundleIDs: [String]?
        var users: [User]?
        var faults: [Fault]?
    }

    struct Network: ScenarioFileSection {
        var pushLatencyMs: Double?
        var pushesLost: Bool?
        var receiverFaults: [String]?
    }

    struct Provider: ScenarioFileSection {
        var keyAndTeamSwapped: Bool?
        var clockOffsetSeconds: Double?
    }

    struct Apple: ScenarioFileSection {
        var flow: Choice<ScenarioSpec.AppleSpec.Flow>?
        var hideEmail: Bool?
        var appleUser: String?
    }

    struct IdentityProvider: ScenarioFileSection {
        var id: String?
        var page: String?
        var loginHint: String?
        var otherAppOwnsScheme: Bool?
    }

    struct MultiFactor: ScenarioFileSection {
        var flow: Choice<ScenarioSpec.MultiFactorSpec.Flow>?
        var secondFactor: String?
        var displayName: String?
        var startAfterSeconds: Double?
    }

    struct User: ScenarioFileSection {
        var phoneNumber: String?
        var code: String?
        var codeEnteredAfterSeconds: Double?
    }
}

/// A value of one of the spec's own enums, refused with their list as ``ScenarioFileChoice`` does.
struct Choice<Value: RawRepresentable & CaseIterable>: Decodable where Value.RawValue == String {
    let value: Value
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let value = Value(rawValue: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: Value.allCases.map(\.rawValue).joined(separator: ", "))
        }
        self.value = value
    }
}

extension ScenarioFileModel {
    /// Decodes `data`, turning what JSONDecoder reports into an error that names the file, the
    /// field (`bad.json.backend.faults[0].status`) and what it must be.
    static func decode(_ data: Data, source: String) throws(ScenarioFileError) -> ScenarioFileModel {
        guard let raw = try? JSONDecoder().decode(JSONValue.self, from: data), case .object = raw else {
            throw ScenarioFileError(.notJSON, "\(source) is not a JSON object")
        }
        do {
            return try JSONDecoder().decode(Root.self, from: data).file
        } catch let error as DecodingError {
            throw fileError(error, source: source, raw: raw)
        } catch {
            throw ScenarioFileError(.notJSON, "\(source): \(error)")
        }
    }

    private struct Root: Decodable {
        let file: ScenarioFileModel
        init(from decoder: any Decoder) throws { file = try ScenarioFileModel.strictly(from: decoder) }
    }

    /// `source.a.b[0].c`.
    static func path(_ source: String, _ codingPath: [any CodingKey]) -> String {
        codingPath.reduce(source) { path, key in key.intValue.map { "\(path)[\($0)]" } ?? "\(path).\(key.stringValue)" }
    }

    private static func fileError(_ error: DecodingError, source: String, raw: JSONValue) -> ScenarioFileError {
        func value(at codingPath: [any CodingKey]) -> String {
            var node: JSONValue? = raw
            for key in codingPath {
                switch node {
                case .object(let object): node = object[key.stringValue]
                case .array(let list): node = key.intValue.flatMap { list.indices.contains($0) ? list[$0] : nil }
                default: node = nil
                }
            }
            guard let node else { return "missing" }
            if case .string(let text) = node { return text }
            return (try? String(decoding: JSONEncoder().encode(node), as: UTF8.self)) ?? "\(node)"
        }
        switch error {
        case .typeMismatch(let type, let context):
            let expected: String
            if context.debugDescription.hasPrefix("a list") {
                expected = context.debugDescription
            } else {
                switch type {
                case is Bool.Type: expected = "true or false"
                case is Double.Type: expected = "a number"
                case is String.Type: expected = "a string"
                case is [String: Any].Type: expected = "an object"
                default: expected = "a list"
                }
            }
            return ScenarioFileError(.invalidValue, "\(path(source, context.codingPath)) must be \(expected), not \(value(at: context.codingPath))")
        case .dataCorrupted(let context) where context.debugDescription.hasPrefix(unknownKeys):
            let keys = context.debugDescription.dropFirst(unknownKeys.count)
            let plural = keys.contains(",") ? "s" : ""
            return ScenarioFileError(.unknownKey, "\(path(source, context.codingPath)): unknown key\(plural) \(keys) (Scenarios/README.md lists the keys)")
        case .dataCorrupted(let context):
            return ScenarioFileError(.invalidValue, "\(path(source, context.codingPath)) must be \(context.debugDescription), not \(value(at: context.codingPath))")
        case .keyNotFound(let key, let context):
            return ScenarioFileError(.missingKey, "\(path(source, context.codingPath)) has no \(key.stringValue)")
        case .valueNotFound(_, let context):
            return ScenarioFileError(.invalidValue, "\(path(source, context.codingPath)) must not be null")
        @unknown default:
            return ScenarioFileError(.invalidValue, "\(source): \(error)")
        }
    }
}
