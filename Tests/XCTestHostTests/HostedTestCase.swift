import FirebaseAuth
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

// An app's existing XCTest suite, in the shapes of FirebaseAuth's own integration tests
// (FirebaseAuth/Tests/SampleSwift/SwiftApiTests: a base class, `Auth.auth()` called straight from
// test methods, completion handlers awaited with `waitForExpectations`, async methods, a seeded
// project). Nothing here configures Firebase or names a backend: the test host does, as the host
// app's delegate does on a device. `XCTestHostRun` runs these classes under `authsim exec` with
// the project in Project/ (an Auth Emulator export); in the plain `swift test` run, which has no
// test host, each skips.

/// The base class, as the SDK's `TestsBase`.
class HostedTestCase: XCTestCase {
    static let timeout = 10.0

    /// The seeded password user (Project/auth_export/accounts.json).
    let seededEmail = "seeded@example.com"
    let seededPassword = "correct-horse"

    /// Whether a test host runs this process (`authsim exec`).
    let hosted = ProcessInfo.processInfo.environment["AUTHSIM_TEST_HOST"] != nil

    override func setUpWithError() throws {
        try XCTSkipUnless(hosted, "runs under `authsim exec` (XCTestHostRun), which launches the test host")
    }

    override func tearDown() {
        // XCTest tears down a test whose setUp skipped it too.
        guard hosted else { return super.tearDown() }
        try? Auth.auth().signOut()
        Auth.auth().settings?.isAppVerificationDisabledForTesting = false
        super.tearDown()
    }

    func signInAnonymously() {
        let expectation = self.expectation(description: "Anonymous sign-in finished.")
        Auth.auth().signInAnonymously { result, error in
            XCTAssertNil(error)
            XCTAssertNotNil(result?.user.uid)
            expectation.fulfill()
        }
        waitForExpectations(timeout: Self.timeout)
    }

    /// The last code the backend texted to `number`, from the SMS outbox as suites written
    /// against the Auth Emulator read it: `GET /emulator/v1/projects/{project}/verificationCodes`.
    func smsCode(to number: String) async throws -> String {
        let environment = ProcessInfo.processInfo.environment
        let host = try XCTUnwrap(environment["FIREBASE_AUTH_EMULATOR_HOST"])
        let project = try XCTUnwrap(environment["GCLOUD_PROJECT"])
        let url = try XCTUnwrap(URL(string: "http://\(host)/emulator/v1/projects/\(project)/verificationCodes"))
        let (data, _) = try await URLSession.shared.data(from: url)
        let outbox = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let codes = try XCTUnwrap(outbox["verificationCodes"] as? [[String: Any]])
        return try XCTUnwrap(codes.last { $0["phoneNumber"] as? String == number }?["code"] as? String)
    }

    /// `verifyPhoneNumber`, the code from the outbox, and the sign-in.
    func signInWithPhone(_ number: String) async throws -> AuthDataResult {
        let verificationID = try await PhoneAuthProvider.provider().verifyPhoneNumber(number, uiDelegate: nil)
        let code = try await smsCode(to: number)
        let credential = PhoneAuthProvider.provider().credential(withVerificationID: verificationID, verificationCode: code)
        return try await Auth.auth().signIn(with: credential)
    }

    func deleteCurrentUser() {
        guard let user = Auth.auth().currentUser else { return }
        let expectation = self.expectation(description: "Delete current user finished.")
        user.delete { error in
            XCTAssertNil(error)
            expectation.fulfill()
        }
        waitForExpectations(timeout: Self.timeout)
    }
}
