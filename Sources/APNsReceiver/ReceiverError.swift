/// A receiver failure that is not an APNs answer: a port that can't be bound, a file that can't be
/// written, a bad option.
public struct ReceiverError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable { case storage, configuration, bind, tls }
    public let code: Code
    public let message: String
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { message }
    /// Errors are equal when their codes are: the message is for people.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
