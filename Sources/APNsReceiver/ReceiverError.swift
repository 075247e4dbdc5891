import Utilities

/// A receiver failure that is not an APNs answer: a port that can't be bound, a file that can't be
/// written, a bad option, a fleet's database that cannot be reached (`unavailable`).
public struct ReceiverError: CodedError {
    public enum Code: String, Sendable, Hashable { case storage, configuration, bind, tls, unavailable }
    public let code: Code
    public let message: String
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}
