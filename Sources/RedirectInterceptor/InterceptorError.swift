import Utilities

/// Why a URL could not be handed to an app, or a scheme not claimed or registered.
package struct InterceptorError: CodedError {
    package enum Code: String, Sendable {
        /// The text is not an absolute URL with a scheme.
        case invalidURL
        /// Not a valid URL scheme (RFC 3986: a letter, then letters, digits, `+`, `-`, `.`).
        case invalidScheme
        /// No running app owns the URL's scheme.
        case noRunningApp
        /// An app claimed the scheme but does not answer (it died, or hangs).
        case appNotResponding
        /// The URL is longer than the interceptor carries.
        case urlTooLong
        /// The app answered something that is not an interceptor answer.
        case badAnswer
        /// The runtime directory's path is too long for a Unix socket.
        case pathTooLong
        /// Another running app already owns the scheme.
        case schemeTaken
        /// A file the registration needs could not be read or written.
        case fileError
    }
    package let code: Code
    package let message: String
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}
