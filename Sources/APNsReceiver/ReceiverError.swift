import Utilities

/// A receiver failure that is not an APNs answer: a port that can't be bound, a file that can't be
/// written, a bad option, a fleet's database that cannot be reached (`unavailable`).
package struct ReceiverError: CodedError, CarriesListenError {
    package enum Code: String, Sendable, Hashable { case storage, configuration, bind, tls, unavailable }
    package let code: Code
    package let message: String
    /// For `bind`: the address and why it could not be bound.
    package let listenError: ListenError?
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
        listenError = nil
    }
    /// A `bind` failure.
    package init(listen: ListenError) {
        code = .bind
        message = listen.description
        listenError = listen
    }
}
