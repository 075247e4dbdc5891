import FirebaseAuth
import Foundation
import XCTest

/// Listeners and the anonymous user, as the SDK's `AnonymousTests` and an app's session observer.
class ListenerHostedTests: HostedTestCase {
    func testStateListenerSeesTheSignInAndTheSignOut() throws {
        let auth = Auth.auth()
        // Listeners are called on the main queue, where the test runs: no lock is needed.
        let signedIn = expectation(description: "The listener saw a user.")
        var signedOut: XCTestExpectation?
        var sawUser = false
        let handle = auth.addStateDidChangeListener { _, user in
            if user != nil, !sawUser {
                sawUser = true
                signedIn.fulfill()
            } else if user == nil, sawUser {
                signedOut?.fulfill()
                signedOut = nil
            }
        }
        defer { auth.removeStateDidChangeListener(handle) }
        signInAnonymously()  // waits for `signedIn` too
        XCTAssertEqual(auth.currentUser?.isAnonymous, true)
        signedOut = expectation(description: "The listener saw no user after one.")
        deleteCurrentUser()  // waits for `signedOut` too
        XCTAssertNil(auth.currentUser)
    }

    func testAnonymousUserAsync() async throws {
        let result = try await Auth.auth().signInAnonymously()
        XCTAssertTrue(result.user.isAnonymous)
        let token = try await result.user.getIDToken()
        XCTAssertEqual(token.split(separator: ".").count, 3)
        try await result.user.delete()
        XCTAssertNil(Auth.auth().currentUser)
    }
}
