import Foundation
import Synchronization

/// What `addStateDidChangeListener` returns: the SDK's `AuthStateDidChangeListenerHandle`
/// (`typedef id<NSObject>` in `Public/FirebaseAuth/FIRAuth.h`, a protocol type in Swift).
public typealias AuthStateDidChangeListenerHandle = NSObjectProtocol
/// What `addIDTokenDidChangeListener` returns: the SDK's `IDTokenDidChangeListenerHandle`.
public typealias IDTokenDidChangeListenerHandle = NSObjectProtocol

/// A listener's handle: identity alone, as the SDK's NotificationCenter observer token.
final class AuthListenerHandle: NSObject, @unchecked Sendable {
    // No state: an object whose identity names one listener. (`@unchecked`: NSObject is not
    // Sendable, and this subclass adds nothing that could race.)
}

/// The listeners of one `Auth` and the last ID token they were told of (FirebaseAuth 12.19,
/// `Auth/Auth.swift` 1349–1416 and `possiblyPostAuthStateChangeNotification`, 1863–1890).
struct AuthListenerBook {
    struct Entry {
        let handle: AuthListenerHandle
        /// Called on the main queue only (12.19's listeners are plain closures it calls there).
        let call: HandedOver<(Auth, User?) -> Void>
    }
    var entries: [Entry] = []
    /// The current user's ID token when the listeners were last told (nil: no user).
    var lastNotifiedToken: String?

    /// Whether `token` (the current user's ID token, nil when signed out) is news: the SDK posts
    /// when it differs from the last one posted (`lastNotifiedUserToken`, nil at first).
    mutating func shouldNotify(token: String?) -> Bool {
        guard token != lastNotifiedToken else { return false }
        lastNotifiedToken = token
        return true
    }
}

/// One delivery to listeners, in the order the changes happened.
enum AuthListenerDelivery: Sendable {
    /// The first call of a listener just added.
    case added(AuthListenerHandle)
    /// The user or its ID token changed: every listener registered now is told.
    case changed([AuthListenerHandle])
}

extension Auth {
    /// `addIDTokenDidChangeListener(_:)`: `listener` is called on the main queue once after it is
    /// added, then each time the user signs in or out or its ID token changes (a refresh, a
    /// reauthentication), with the user current when it runs.
    @discardableResult
    public func addIDTokenDidChangeListener(_ listener: @escaping (Auth, User?) -> Void) -> IDTokenDidChangeListenerHandle {
        let handle = AuthListenerHandle()
        let call = HandedOver(listener)
        state.withLock { $0.listeners.entries.append(.init(handle: handle, call: call)) }
        deliver(.added(handle))
        return handle
    }

    /// `removeIDTokenDidChangeListener(_:)`: no further calls of that listener.
    public func removeIDTokenDidChangeListener(_ listenerHandle: IDTokenDidChangeListenerHandle) {
        state.withLock { state in state.listeners.entries.removeAll { $0.handle === (listenerHandle as AnyObject) } }
    }

    /// `addStateDidChangeListener(_:)`: `listener` is called on the main queue once after it is
    /// added, then each time a user with another UID signs in or the user signs out (not when the
    /// same user's token changes), as the SDK filters its ID-token listener.
    @discardableResult
    public func addStateDidChangeListener(_ listener: @escaping (Auth, User?) -> Void) -> AuthStateDidChangeListenerHandle {
        var firstInvocation = true
        var previousUserID: String?
        return addIDTokenDidChangeListener { auth, user in
            let shouldCall = firstInvocation || previousUserID != user?.uid
            firstInvocation = false
            previousUserID = user?.uid
            if shouldCall { listener(auth, user) }
        }
    }

    /// `removeStateDidChangeListener(_:)`.
    public func removeStateDidChangeListener(_ listenerHandle: AuthStateDidChangeListenerHandle) {
        removeIDTokenDidChangeListener(listenerHandle)
    }

    /// Tells the listeners when the current user's ID token is not the one they last heard of (a
    /// sign-in, a sign-out, a new token): called wherever the SDK calls
    /// `possiblyPostAuthStateChangeNotification` (the user saved, or made current or none).
    /// Then ``authStateDidChangeNotification`` is posted, with this `Auth` as its object, whether
    /// or not a listener is registered (the SDK's listeners are observers of that notification).
    func possiblyNotifyListeners() {
        let token = currentUser?.rawIDToken
        let handles = state.withLock { state -> [AuthListenerHandle]? in
            guard state.listeners.shouldNotify(token: token) else { return nil }
            return state.listeners.entries.map(\.handle)
        }
        if let handles { deliver(.changed(handles)) }
    }

    /// `Auth.authStateDidChangeNotification` (`FIRAuthStateDidChangeNotification`, `AuthStateDidChange`):
    /// posted on the main queue, the `Auth` its object, when the current user or its ID token changes.
    public static let authStateDidChangeNotification = AuthStateDidChange

    /// Queues `delivery` for the main actor, behind every earlier one (the SDK's
    /// `DispatchQueue.main.async`, which keeps their order).
    private func deliver(_ delivery: AuthListenerDelivery) {
        let (continuation, started) = state.withLock { state -> (AsyncStream<AuthListenerDelivery>.Continuation, AsyncStream<AuthListenerDelivery>?) in
            if let continuation = state.listenerDeliveries { return (continuation, nil) }
            let (deliveries, continuation) = AsyncStream.makeStream(of: AuthListenerDelivery.self)
            state.listenerDeliveries = continuation
            return (continuation, deliveries)
        }
        if let started {
            let weakAuth = WeakAuth(auth: self)
            Task { @MainActor in await Auth.runDeliveries(started) { weakAuth.auth } }
        }
        continuation.yield(delivery)
    }

    /// Runs deliveries in order on the main actor, each listener with the user current then.
    @MainActor
    static func runDeliveries(_ deliveries: AsyncStream<AuthListenerDelivery>, of auth: @escaping @Sendable () -> Auth?) async {
        for await delivery in deliveries {
            guard let auth = auth() else { return }
            let handles: [AuthListenerHandle]
            switch delivery {
            case .added(let handle): handles = [handle]
            case .changed(let all): handles = all
            }
            for handle in handles {
                // A listener removed since its delivery was queued is not called.
                guard let entry = auth.state.withLock({ state in state.listeners.entries.first { $0.handle === handle } }) else { continue }
                entry.call.value(auth, auth.currentUser)
            }
            if case .changed = delivery { NotificationCenter.default.post(name: Auth.authStateDidChangeNotification, object: auth) }
        }
    }
}

// Auth/Auth+Async.swift: the listeners as `AsyncSequence`s. Each iteration adds its own listener
// (so its first element is the user current then) and removes it when the iteration ends.
extension Auth {
    /// `for await user in Auth.auth().authStateChanges`: the user after each sign-in and sign-out,
    /// as ``addStateDidChangeListener(_:)`` calls its listener.
    public var authStateChanges: AuthStateChangesSequence { AuthStateChangesSequence(self) }

    /// `for await user in Auth.auth().idTokenChanges`: the user after each change of it or of its
    /// ID token, as ``addIDTokenDidChangeListener(_:)`` calls its listener.
    public var idTokenChanges: IDTokenChangesSequence { IDTokenChangesSequence(self) }

    /// What ``authStateChanges`` is.
    public struct AuthStateChangesSequence: AsyncSequence, @unchecked Sendable {
        public typealias Element = User?
        public typealias Failure = Never
        public typealias AsyncIterator = Iterator

        private let auth: Auth

        public init(_ auth: Auth) { self.auth = auth }

        public func makeAsyncIterator() -> Iterator {
            Iterator(listenerStream(auth, add: { auth, listener in auth.addStateDidChangeListener(listener) },
                                    remove: { auth, handle in auth.removeStateDidChangeListener(handle) }))
        }

        /// Not `Sendable`, as the SDK's: one task iterates.
        public struct Iterator: AsyncIteratorProtocol {
            private var users: AsyncStream<HandedOver<User?>>.Iterator
            init(_ stream: AsyncStream<HandedOver<User?>>) { users = stream.makeAsyncIterator() }
            public mutating func next() async -> User?? {
                guard let next = await users.next() else { return nil }
                return .some(next.value)
            }
        }
    }

    /// What ``idTokenChanges`` is.
    public struct IDTokenChangesSequence: AsyncSequence, @unchecked Sendable {
        public typealias Element = User?
        public typealias Failure = Never
        public typealias AsyncIterator = Iterator

        private let auth: Auth

        public init(_ auth: Auth) { self.auth = auth }

        public func makeAsyncIterator() -> Iterator {
            Iterator(listenerStream(auth, add: { auth, listener in auth.addIDTokenDidChangeListener(listener) },
                                    remove: { auth, handle in auth.removeIDTokenDidChangeListener(handle) }))
        }

        /// Not `Sendable`, as the SDK's: one task iterates.
        public struct Iterator: AsyncIteratorProtocol {
            private var users: AsyncStream<HandedOver<User?>>.Iterator
            init(_ stream: AsyncStream<HandedOver<User?>>) { users = stream.makeAsyncIterator() }
            public mutating func next() async -> User?? {
                guard let next = await users.next() else { return nil }
                return .some(next.value)
            }
        }
    }
}

@available(*, unavailable)
extension Auth.AuthStateChangesSequence.Iterator: Sendable {}

@available(*, unavailable)
extension Auth.IDTokenChangesSequence.Iterator: Sendable {}

/// A listener's calls as a stream: added now, removed when the stream's consumer goes away.
private func listenerStream(_ auth: Auth, add: (Auth, @escaping (Auth, User?) -> Void) -> NSObjectProtocol,
                            remove: @escaping @Sendable (Auth, NSObjectProtocol) -> Void) -> AsyncStream<HandedOver<User?>> {
    // Users are not Sendable (as in 12.19): each goes from the main queue to the one iterating task.
    let (users, continuation) = AsyncStream.makeStream(of: HandedOver<User?>.self)
    let handle = add(auth) { _, user in continuation.yield(HandedOver(user)) }
    let kept = UncheckedHandle(handle)
    let weakAuth = WeakAuth(auth: auth)
    continuation.onTermination = { _ in if let auth = weakAuth.auth { remove(auth, kept.handle) } }
    return users
}

/// A listener handle carried into `onTermination` (an `NSObjectProtocol`, not `Sendable`; only
/// its identity is used, to remove the listener).
private struct UncheckedHandle: @unchecked Sendable {
    let handle: NSObjectProtocol
    init(_ handle: NSObjectProtocol) { self.handle = handle }
}
