/// The two APNs environments. Device tokens are issued for one of them and are rejected by the other
/// with `BadDeviceToken`.
public enum APNsEnvironment: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// Development: `api.sandbox.push.apple.com` (older name `api.development.push.apple.com`).
    case sandbox
    /// `api.push.apple.com`.
    case production

    public var description: String { rawValue }

    /// The environment whose tokens a build signed with this `aps-environment` entitlement gets
    /// (`development`: sandbox, a debug build; `production`: TestFlight, App Store, ad hoc); nil
    /// for any other value.
    package init?(apsEnvironment: String) {
        switch apsEnvironment {
        case Self.sandbox.apsEnvironment: self = .sandbox
        case Self.production.apsEnvironment: self = .production
        default: return nil
        }
    }

    /// The `aps-environment` entitlement of a build that gets this environment's tokens.
    package var apsEnvironment: String {
        switch self {
        case .sandbox: "development"
        case .production: "production"
        }
    }

    /// Apple's host for this environment.
    package var appleHost: String {
        switch self {
        case .sandbox: return "api.sandbox.push.apple.com"
        case .production: return "api.push.apple.com"
        }
    }

    /// Every host name Apple (or an older client) uses for this environment.
    package var appleHostNames: [String] {
        switch self {
        case .sandbox: return ["api.sandbox.push.apple.com", "api.development.push.apple.com"]
        case .production: return ["api.push.apple.com"]
        }
    }

    /// The environment an Apple host name (as sent in TLS SNI or `:authority`) names, if any.
    package static func named(byHost host: String) -> APNsEnvironment? {
        let name = host.lowercased()
        return allCases.first { $0.appleHostNames.contains(name) }
    }
}
