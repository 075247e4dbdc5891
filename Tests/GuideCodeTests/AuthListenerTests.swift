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

    func heard(_ user: User?) {
        dispatchPrecondition(condition: .onQueue(.main))
        users.append(user?.uid)
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
                    log.heard(user)
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
                let sentinelHandle = Auth.auth().addStateDidChangeListener { _, user in sentinel.heard(user) }
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
                    log.heard(user)
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
                let laterHandle = Auth.auth().addStateDidChangeListener { _, user in later.heard(user) }
                await later.wait(for: 1)
                #expect(await later.users == [uid])
                Auth.auth().removeStateDidChangeListener(laterHandle)
                try Auth.auth().signOut()
            }
        }
    }
}
