import FirebaseAuth
import FirebaseCore
import Foundation
import Testing

/// What a listener heard, in order, each call checked to run on the main queue; a test waits for
/// the next call, never for a time.
@MainActor
final class ListenerLog {
    private(set) var users: [String?] = []
    private var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    /// What a listener heard: the user's ID (a `User` is not `Sendable`, as in 12.19, so the
    /// listener passes its ID to the main actor).
    func heard(_ uid: String?) {
        dispatchPrecondition(condition: .onQueue(.main))
        users.append(uid)
        let ready = waiters.filter { $0.count <= users.count }
        waiters.removeAll { $0.count <= users.count }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Returns once `count` calls were heard.
    func wait(for count: Int) async {
        if users.count >= count { return }
        await withCheckedContinuation { waiters.append((count, $0)) }
    }
}

extension GuideCode {
    /// FirebaseAuth 12.19's listeners (`Auth/Auth.swift` 1349–1416: the state listener is the
    /// ID-token listener filtered by UID; `possiblyPostAuthStateChangeNotification` 1863–1890:
    /// a post when the current user's token differs from the last one posted), case by case as
    /// `Tests/Unit/AuthTests.swift` `testAuthStateChanges` and `testIDTokenChanges` run them,
    /// against the backend instead of a mocked RPC.
    @Suite("Auth state and ID-token listeners, as the SDK calls them")
    struct AuthListeners {
        func signIn(_ guide: GuideWorld, _ number: String) async throws -> String {
            let verificationID = try await PhoneAuthProvider.provider().verifyPhoneNumber(number, uiDelegate: nil)
            let code = try #require(await guide.sms(to: number))
            let credential = PhoneAuthProvider.provider().credential(withVerificationID: verificationID, verificationCode: code)
            return try await Auth.auth().signIn(with: credential).user.uid
        }

        @Test("the state listener: once when added, on sign-in, not on the same user's second sign-in, on sign-out, never after removal")
        func stateListener() async throws {
            try await withGuideWorld { guide in
                try Auth.auth().signOut()
                let log = await ListenerLog()
                let handle: AuthStateDidChangeListenerHandle = Auth.auth().addStateDidChangeListener { auth, user in
                    #expect(auth === Auth.auth())
                    #expect(user === auth.currentUser)
                    let uid = user?.uid
                    MainActor.assumeIsolated { log.heard(uid) }  // a plain closure in 12.19, called on the main queue
                }
                await log.wait(for: 1)
                #expect(await log.users == [nil])

                let uid = try await signIn(guide, "+16505551234")
                await log.wait(for: 2)
                #expect(await log.users == [nil, uid])
                // The same user again: no call (the next one heard is the sign-out's; calls keep their order).
                #expect(try await signIn(guide, "+16505551234") == uid)
                try Auth.auth().signOut()
                await log.wait(for: 3)
                #expect(await log.users == [nil, uid, nil])

                // Removed: a sign-in a sentinel hears is not heard by it.
                Auth.auth().removeStateDidChangeListener(handle)
                let sentinel = await ListenerLog()
                let sentinelHandle = Auth.auth().addStateDidChangeListener { _, user in let uid = user?.uid; MainActor.assumeIsolated { sentinel.heard(uid) } }
                _ = try await signIn(guide, "+16505551234")
                await sentinel.wait(for: 2)
                #expect(await log.users == [nil, uid, nil])
                Auth.auth().removeStateDidChangeListener(sentinelHandle)
                try Auth.auth().signOut()
            }
        }

        @Test("the ID-token listener: once when added, on sign-in and sign-out; each with the user current when it runs")
        func idTokenListener() async throws {
            try await withGuideWorld { guide in
                try Auth.auth().signOut()
                let log = await ListenerLog()
                let handle: IDTokenDidChangeListenerHandle = Auth.auth().addIDTokenDidChangeListener { auth, user in
                    #expect(user === auth.currentUser)
                    let uid = user?.uid
                    MainActor.assumeIsolated { log.heard(uid) }  // a plain closure in 12.19, called on the main queue
                }
                await log.wait(for: 1)
                let uid = try await signIn(guide, "+16505550199")
                await log.wait(for: 2)
                try Auth.auth().signOut()
                await log.wait(for: 3)
                #expect(await log.users == [nil, uid, nil])
                Auth.auth().removeIDTokenDidChangeListener(handle)
                // A listener added while a user is signed in hears that user first.
                let later = await ListenerLog()
                _ = try await signIn(guide, "+16505550199")
                let laterHandle = Auth.auth().addStateDidChangeListener { _, user in let uid = user?.uid; MainActor.assumeIsolated { later.heard(uid) } }
                await later.wait(for: 1)
                #expect(await later.users == [uid])
                Auth.auth().removeStateDidChangeListener(laterHandle)
                try Auth.auth().signOut()
            }
        }
            /// `Auth/Auth+Async.swift`: each iteration adds a listener and yields what it hears.
        @Test("authStateChanges and idTokenChanges: for await hears the user now, each sign-in and sign-out; a finished loop hears no more")
        func asyncSequences() async throws {
            try await withGuideWorld { guide in
                try Auth.auth().signOut()
                var states = Auth.auth().authStateChanges.makeAsyncIterator()
                var tokens = Auth.auth().idTokenChanges.makeAsyncIterator()
                #expect(try #require(await states.next()) == nil)
                #expect(try #require(await tokens.next()) == nil)
                let uid = try await signIn(guide, "+16505550142")
                #expect(try #require(await states.next())?.uid == uid)
                #expect(try #require(await tokens.next())?.uid == uid)
                // The same user's new ID token: the token sequence hears it, the state sequence does not.
                guide.backendClock.advance(by: 60)
                _ = try await Auth.auth().currentUser?.getIDToken(forcingRefresh: true)
                #expect(try #require(await tokens.next())?.uid == uid)
                try Auth.auth().signOut()
                #expect(try #require(await states.next()) == nil)
                #expect(try #require(await tokens.next()) == nil)

                // As an app writes it: a loop that stops at the first signed-in user.
                let signedIn = Task { @MainActor () -> String? in
                    for await user in Auth.auth().authStateChanges where user != nil { return user?.uid }
                    return nil
                }
                let again = try await signIn(guide, "+16505550142")
                #expect(await signedIn.value == again)
                try Auth.auth().signOut()
            }
        }

        /// `Auth/Auth.swift` 1621 and `possiblyPostAuthStateChangeNotification` (1863–1890): the
        /// notification is posted with the `Auth` as its object, on the main queue, whenever the
        /// listeners are told, listener or not.
        @Test("authStateDidChangeNotification (AuthStateDidChange) is posted with the Auth on the main queue at each sign-in, token and sign-out")
        func notification() async throws {
            #expect(Auth.authStateDidChangeNotification == AuthStateDidChange)
            #expect(AuthStateDidChange.rawValue == "FIRAuthStateDidChangeNotification")
            try await withGuideWorld { guide in
                try Auth.auth().signOut()
                let log = await ListenerLog()
                let observer = NotificationCenter.default.addObserver(forName: Auth.authStateDidChangeNotification, object: nil, queue: nil) { note in
                    // Auth is not Sendable (as in 12.19): read it here, hand the main actor values.
                    let auth = note.object as? Auth
                    let isDefault = auth === Auth.auth(), uid = auth?.currentUser?.uid
                    MainActor.assumeIsolated {
                        #expect(isDefault)
                        log.heard(uid)
                    }
                }
                defer { NotificationCenter.default.removeObserver(observer) }
                let uid = try await signIn(guide, "+16505550143")
                await log.wait(for: 1)
                guide.backendClock.advance(by: 60)
                _ = try await Auth.auth().currentUser?.getIDToken(forcingRefresh: true)
                await log.wait(for: 2)
                try Auth.auth().signOut()
                await log.wait(for: 3)
                #expect(await log.users == [uid, uid, nil])
            }
        }

        /// `Auth/Auth.swift` 74–138 (`AuthInterop`) and `User/User.swift` 42, 57, 573.
        @Test("getUserID, getToken(forcingRefresh:completion:), idTokenForcingRefresh, anonymous() and emailVerified()")
        func interop() async throws {
            try await withGuideWorld { guide in
                try Auth.auth().signOut()
                #expect(Auth.auth().getUserID() == nil)
                let none: (String?, Bool) = await withCheckedContinuation { done in
                    Auth.auth().getToken(forcingRefresh: false) { token, error in done.resume(returning: (token, error != nil)) }
                }
                #expect(none.0 == nil && !none.1, "no user: nil and no error, as the SDK")
                let user = try await Auth.auth().signInAnonymously().user
                #expect(Auth.auth().getUserID() == user.uid)
                #expect(user.anonymous() && !user.emailVerified())
                let token: String? = await withCheckedContinuation { done in
                    Auth.auth().getToken(forcingRefresh: false) { token, _ in done.resume(returning: token) }
                }
                #expect(token == (try await user.getIDToken()))
                guide.backendClock.advance(by: 60)
                let fresh = try await user.idTokenForcingRefresh(true)
                #expect(fresh != token)
                #expect(try await user.getIDToken() == fresh)
                try Auth.auth().signOut()
            }
        }
    }
}
