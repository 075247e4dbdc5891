import FirebaseAuth
import Foundation
import XCTest

/// Phone sign-in with app verification on, as on a phone: the backend's silent push reaches the
/// test host's device through push-receiver's device gateway and proves the app, so no reCAPTCHA
/// is shown. The code is read from the SMS outbox, as suites written against the Auth Emulator
/// read it.
class SilentPushHostedTests: HostedTestCase {
    func testSilentPushProvesTheApp() async throws {
        let result = try await signInWithPhone("+16505550142")
        XCTAssertEqual(result.user.phoneNumber, "+16505550142")
        XCTAssertNotNil(Auth.auth().apnsToken)
    }
}

/// The same sign-in when APNs drops the push (`authsim exec --fault drop`): the SDK waits the
/// backend's suggested timeout, then proves the app with reCAPTCHA, whose page the test host's
/// default presenter loads (HTTPS, under the CA the host's device trusts) and whose redirect comes
/// back to the app's URL scheme. XCTestHostRun runs this class in a run of its own.
class RecaptchaFallbackHostedTests: HostedTestCase {
    func testRecaptchaProvesTheAppWhenThePushIsLost() async throws {
        let result = try await signInWithPhone("+16505550143")
        XCTAssertEqual(result.user.phoneNumber, "+16505550143")
    }
}
