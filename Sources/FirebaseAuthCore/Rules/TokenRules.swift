import Foundation

/// The APNs token's rules, as FirebaseAuth 12.19's `AuthAPNSTokenManager` keeps them
/// (AuthAPNSTokenManager.swift; its unit tests AuthAPNSTokenManagerTests): a token once set
/// answers every later ask at once; while there is none, the first ask has the app register for
/// remote notifications and the later ones wait with it; a token, or the OS's failure to
/// register (`cancel(withError:)`), ends every wait; a wait that times out leaves, so the next
/// ask registers again. A value over the waits it holds (`Waiter`): `Auth` keeps one under its
/// lock and ends the waits it hands back.
struct APNSTokenBook<Waiter: Sendable>: Sendable {
    /// The token, once set.
    private(set) var token: AuthAPNSToken?
    /// The asks waiting for a token, by number.
    private var waiting: [(number: Int, waiter: Waiter)] = []
    private var nextNumber = 0

    /// What an ask for the token does.
    enum Ask: Equatable {
        /// The token is here.
        case token(AuthAPNSToken)
        /// Wait as `number`; `register`: the first waiter, which asks the app to register.
        case wait(number: Int, register: Bool)
    }

    var waitingCount: Int { waiting.count }

    /// `getTokenInternal`: the token at once, or a wait (``Ask/wait(number:register:)``).
    mutating func ask(_ waiter: Waiter) -> Ask {
        if let token { return .token(token) }
        nextNumber += 1
        waiting.append((nextNumber, waiter))
        return .wait(number: nextNumber, register: waiting.count == 1)
    }

    /// `token`'s setter: keeps `token` and ends every wait with it (returned).
    mutating func set(_ token: AuthAPNSToken) -> [Waiter] {
        self.token = token
        return endAll()
    }

    /// `cancel(withError:)`: the OS could not register; every wait ends (returned), the token stays unset.
    mutating func cancel() -> [Waiter] { endAll() }

    /// The wait `number` timed out: it leaves (`false`: it had already ended).
    mutating func timedOut(_ number: Int) -> Bool {
        guard let index = waiting.firstIndex(where: { $0.number == number }) else { return false }
        waiting.remove(at: index)
        return true
    }

    private mutating func endAll() -> [Waiter] {
        defer { waiting = [] }
        return waiting.map(\.waiter)
    }
}

/// A user's ID token's rules, as FirebaseAuth 12.19's `SecureTokenService` and its
/// `TokenRefreshCoalescer` keep them: the token is used as held until it is within five minutes
/// of expiring (`kFiveMinutes`), its expiry is unknown, or a refresh is forced; then one refresh
/// runs and every caller meanwhile joins it; a refresh's answer replaces the ID token and its
/// expiry, and the refresh token only when it comes with one. A value over the refresh it holds
/// while one runs (`Refresh`: `User`'s task): `User` keeps one under its lock.
struct IDTokenBook<Refresh: Sendable>: Sendable {
    private(set) var idToken: String
    private(set) var refreshToken: String
    /// When the ID token stops being good; `nil`: unknown (the SDK after a second factor, whose
    /// answer has no `expiresIn`), so the next use refreshes it.
    private(set) var expiration: Date?
    /// The refresh that runs, if one does.
    private(set) var refreshing: Refresh?

    /// The SDK refreshes a token this close to its expiry.
    static var refreshMargin: TimeInterval { 5 * 60 }

    init(idToken: String, refreshToken: String, expiration: Date?) {
        self.idToken = idToken
        self.refreshToken = refreshToken
        self.expiration = expiration
    }

    /// What a caller of `getIDToken(forcingRefresh:)` does.
    enum Next {
        /// Use the token as held.
        case use(String)
        /// Join the refresh that runs.
        case join(Refresh)
        /// A refresh was started (by `start`, which the book now holds as running).
        case refresh(Refresh)
    }

    /// - Parameter start: starts a refresh, when one is needed and none runs.
    mutating func next(now: Date, forceRefresh: Bool, start: () -> Refresh) -> Next {
        if !forceRefresh, let expiration, expiration.timeIntervalSince(now) > Self.refreshMargin { return .use(idToken) }
        if let refreshing { return .join(refreshing) }
        let started = start()
        refreshing = started
        return .refresh(started)
    }

    /// The Secure Token service answered: the new ID token, a refresh token if it sent one, the
    /// expiry `expiresIn` seconds from `now` (unknown without it).
    mutating func refreshed(idToken: String, refreshToken: String?, expiresIn: TimeInterval?, now: Date) {
        adopt(idToken: idToken, refreshToken: refreshToken, expiration: expiresIn.map { now.addingTimeInterval($0) })
    }

    /// Tokens from elsewhere (a sign-in, reauthentication): the same replacement rule.
    mutating func adopt(idToken: String, refreshToken: String?, expiration: Date?) {
        self.idToken = idToken
        if let refreshToken, !refreshToken.isEmpty { self.refreshToken = refreshToken }
        self.expiration = expiration
    }

    /// The refresh ended, answered or not: the next caller that needs one starts another.
    mutating func refreshEnded() { refreshing = nil }
}

extension IDTokenBook.Next: Equatable where Refresh: Equatable {}
