import Foundation

/// A run's root cause in one sentence, and the fix.
public struct Diagnosis: Sendable, Hashable {
    /// A stable code (`tokenTypeMismatch`, `keyAndTeamSwapped`, …).
    public let code: String
    public let cause: String
    public let fix: String

    public init(_ code: String, cause: String, fix: String) {
        self.code = code
        self.cause = cause
        self.fix = fix
    }
}
