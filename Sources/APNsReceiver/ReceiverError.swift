import Utilities

/// A receiver failure that is not an APNs answer: a port that can't be bound, a file that can't be
/// written, a bad option, a fleet's database that cannot be reached (`unavailable`).
package struct ReceiverError: CodedError, CarriesListenError {
    package enum Code: String, Sendable, Hashable {
        case storage, configuration, bind, tls, unavailable
        /// A state file of a format version this build does not read (written by a newer authsim).
        case format
    }
    package let code: Code
    package let message: String
    /// For `bind`: the address and why it could not be bound.
    package let listenError: ListenError?
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
        listenError = nil
    }
    /// Whether a server answers it 503 (try again): the fleet's store out of reach, or a state
    /// file that cannot be kept (a full disk, a read-only folder).
    package var isUnavailable: Bool { code == .unavailable || code == .storage }
    /// A state file that cannot be opened, written or read: `format` when a newer authsim wrote
    /// it, else `storage`.
    package init(_ error: FileStoreError) {
        self.init(error.code == .format ? .format : .storage, error.message)
    }
    /// A `bind` failure.
    package init(listen: ListenError) {
        code = .bind
        message = listen.description
        listenError = listen
    }
}
