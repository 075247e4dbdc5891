import Utilities

/// A receiver failure that is not an APNs answer: a port that can't be bound, a file that can't be
/// written, a bad option, a fleet's database that cannot be reached (`unavailable`).
public struct ReceiverError: CodedError, CarriesListenError {
    public enum Code: String, Sendable, Hashable { case storage, configuration, bind, tls, unavailable }
    public let code: Code
    public let message: String
    /// For `bind`: the address and why it could not be bound.
    public let listenError: ListenError?
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
        listenError = nil
    }
    /// A `bind` failure.
    public init(listen: ListenError) {
        code = .bind
        message = listen.description
        listenError = listen
    }
}
