/// The app credential's rules, as FirebaseAuth 12.19's `AuthAppCredentialManager` keeps them: the
/// receipts verifyClient answered that still wait for their silent push (at most 32, oldest
/// dropped first), and the credential a push completed. A value: no locks, no waits, no I/O;
/// `Auth` holds one under its lock and runs what it decides.
struct AppCredentialBook: Sendable, Hashable {
    /// Receipts waiting for their push, oldest first.
    private(set) var pending: [String] = []
    /// The credential the last matching push completed (the SDK's `credential`).
    private(set) var credential: AppCredential?

    /// Pending receipts kept at most (`AuthAppCredentialManager.maximumNumberOfPendingReceipts`).
    static let maximumPending = 32

    init(pending: [String] = [], credential: AppCredential? = nil) {
        self.pending = Array(pending.suffix(Self.maximumPending))
        self.credential = credential
    }

    /// `didStartVerification(withReceipt:)`: `receipt` now waits for its push (a receipt already
    /// waiting moves to the newest place); past the limit the oldest is forgotten.
    mutating func expect(_ receipt: String) {
        pending.removeAll { $0 == receipt }
        pending.append(receipt)
        if pending.count > Self.maximumPending { pending.removeFirst(pending.count - Self.maximumPending) }
    }

    /// `canFinishVerification(withReceipt:secret:)`: a push carrying `receipt` and `secret`.
    /// - Returns: the completed credential, or nil when no pending receipt matches (a push for a
    ///   receipt the app has not seen yet, or one already used, is not Auth's).
    mutating func complete(receipt: String, secret: String) -> AppCredential? {
        guard let index = pending.firstIndex(of: receipt) else { return nil }
        pending.remove(at: index)
        let completed = AppCredential(receipt: receipt, secret: secret)
        credential = completed
        return completed
    }

    /// The credential for `receipt`, if its push already came.
    func credential(for receipt: String) -> AppCredential? { credential?.receipt == receipt ? credential : nil }

    /// `clearCredential()`: the backend refused it (INVALID_APP_CREDENTIAL); the next sign-in
    /// verifies the app again.
    mutating func clear() { credential = nil }
}
