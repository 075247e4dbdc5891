import FirebaseAuth
import Foundation
import XCTest

/// Email and password against the seeded project, as the SDK's `EmailPasswordTests` and
/// `AccountInfoTests` call them.
class EmailPasswordHostedTests: HostedTestCase {
    func testSeededUserSignsInWithACompletionHandler() {
        let auth = Auth.auth()
        let expectation = self.expectation(description: "Signed in the seeded user.")
        auth.signIn(withEmail: seededEmail, password: seededPassword) { result, error in
            XCTAssertNil(error)
            XCTAssertEqual(result?.user.uid, "seeded-email-user")
            XCTAssertEqual(auth.currentUser?.displayName, "Seeded User")
            expectation.fulfill()
        }
        waitForExpectations(timeout: Self.timeout)
    }

    func testWrongPasswordIsAnInvalidCredential() async throws {
        do {
            try await Auth.auth().signIn(withEmail: seededEmail, password: "wrong")
            XCTFail("signed in with a wrong password")
        } catch {
            // Email enumeration protection is on (Project/auth_export/config.json): Google answers
            // INVALID_LOGIN_CREDENTIALS, which the SDK gives as invalidCredential.
            XCTAssertEqual((error as NSError).code, AuthErrorCode.invalidCredential.rawValue)
        }
        XCTAssertNil(Auth.auth().currentUser)
    }

    func testCreatedUserIsDeleted() async throws {
        let auth = Auth.auth()
        let email = "created-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        try await auth.createUser(withEmail: email, password: "password")
        XCTAssertEqual(auth.currentUser?.email, email)
        do {
            _ = try await auth.createUser(withEmail: email, password: "password")
            XCTFail("created the same user twice")
        } catch {
            XCTAssertEqual((error as NSError).code, AuthErrorCode.emailAlreadyInUse.rawValue)
        }
        try await auth.currentUser?.delete()
        XCTAssertNil(auth.currentUser)
    }

    func testSignInMethodsAreHidden() async throws {
        // Enumeration protection: no sign-in methods, even for a user who exists (firebase-ios-sdk#13550).
        let methods = try await Auth.auth().fetchSignInMethods(forEmail: seededEmail)
        XCTAssertEqual(methods, [])
    }
}
