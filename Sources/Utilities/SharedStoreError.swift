/// Why a fleet's shared store (a database several nodes use) could not do what was asked. The
/// file-backed stores' counterpart is ``FileStoreError``.
package struct SharedStoreError: CodedError {
    package enum Code: String, Sendable, Hashable {
        /// The database cannot be reached, or a query failed: a request is answered 503 (or 500 by APNs).
        case unavailable
        /// The database's schema is newer than this program's.
        case schemaTooNew
        /// The database holds another project's backend.
        case otherProject
        /// A stored record or key this program cannot read.
        case corrupt
    }
    package let code: Code
    package let message: String
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}
