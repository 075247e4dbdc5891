import APNsWire
import Utilities

/// A failure to get an answer from APNs (not an APNs rejection: those are ``APNsWire/APNsResponse``s).
package struct SenderError: CodedError {
    package enum Code: String, Sendable, Hashable {
        case configuration, connect, tls, streamRefused, connectionClosed, interrupted, protocolError, timeout
    }
    package let code: Code
    package let message: String
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
    /// Whether the push surely was not processed and may be sent again (REFUSED_STREAM, or a GOAWAY
    /// that excluded it, or a connection that closed before the request went out). A push whose
    /// connection died after it was sent (``Code/interrupted``) may have been accepted: it is not
    /// retried, since a retry could deliver it twice.
    package var isRetryable: Bool { code == .streamRefused || code == .connectionClosed }
}
