import APNsWire
import Utilities
import Foundation
import Synchronization

/// Hands out the provider token for a connection: one token, reused until it is
/// ``refreshInterval`` old, then a new one. Never one per request: APNs answers
/// `TooManyProviderTokenUpdates` to a connection that changes tokens within 20 minutes, and
/// `ExpiredProviderToken` to one older than an hour.
///
/// A lock, not an actor: every push asks for the token, and the answer is almost always the
/// one already made.
package final class ProviderTokenCache: Sendable {
    /// The shortest and longest refresh interval APNs allows: at least 20 minutes, under 60.
    package static let allowedRefresh: Range<TimeInterval> = 1200..<3600
    /// Peers refresh at 30–55 minutes; 50 leaves room for clock skew.
    package static let defaultRefresh: TimeInterval = 3000
    /// How far before the current token's `iat` a reading may be and still take it. Callers read
    /// the clock before the lock, so a caller can arrive with a reading a moment older than the
    /// token another caller just minted: a new token then would be a second one within seconds on
    /// the same connection, and APNs answers every push after it `TooManyProviderTokenUpdates`.
    /// Further back, the clock was set back, and a token from its future is not used.
    package static let earlierReadingTolerance: TimeInterval = 5

    package let signer: ProviderTokenSigner
    package let refreshInterval: TimeInterval
    private let clock: any WallClock
    private struct State {
        var current: (token: String, issuedAt: Date)?
        var minted = 0
    }
    private let state = Mutex(State())
    /// How many tokens this cache has signed.
    package var tokensMinted: Int { state.withLock { $0.minted } }

    /// - Throws: ``SenderError`` when `refreshInterval` is outside ``allowedRefresh``.
    package init(signer: ProviderTokenSigner, clock: any WallClock = SystemWallClock(),
                refreshInterval: TimeInterval = ProviderTokenCache.defaultRefresh) throws(SenderError) {
        guard Self.allowedRefresh.contains(refreshInterval) else {
            throw SenderError(.configuration, "the token refresh interval must be at least 20 and under 60 minutes; got \(Int(refreshInterval)) s")
        }
        self.signer = signer
        self.clock = clock
        self.refreshInterval = refreshInterval
    }

    /// The token to send now.
    package func token() -> String {
        let now = clock.now
        return state.withLock { state in
            if let current = state.current, (-Self.earlierReadingTolerance..<refreshInterval).contains(now.timeIntervalSince(current.issuedAt)) {
                return current.token
            }
            let token = signer.token(issuedAt: now)
            state.current = (token, now)
            state.minted += 1
            return token
        }
    }

    /// Drops the current token (after APNs called it expired or invalid), so the next push signs anew.
    package func invalidate() { state.withLock { $0.current = nil } }

    /// APNs' answer to a push that carried the current token: `ExpiredProviderToken` drops it
    /// (every sender path hears its answers through here).
    func heard(_ response: APNsResponse) {
        if response.reason == .expiredProviderToken { invalidate() }
    }
}
