import Foundation

/// A run's root cause in one sentence, and the fix.
public struct Diagnosis: Sendable, Hashable {
    /// A stable code (`tokenTypeMismatch`, `keyAndTeamSwapped`, …).
    public let code: String
    public let cause: String
    public let fix: String

    /// `cause` and `fix` are sentences without their final period (a reason's meaning quoted at
    /// the end keeps Apple's, which is dropped here): whoever shows them ends them.
    public init(_ code: String, cause: String, fix: String) {
        self.code = code
        self.cause = Self.unstopped(cause)
        self.fix = Self.unstopped(fix)
    }

    private static func unstopped(_ sentence: String) -> String {
        var text = Substring(sentence)
        while text.last == "." || text.last == " " { text = text.dropLast() }
        return String(text)
    }
}
