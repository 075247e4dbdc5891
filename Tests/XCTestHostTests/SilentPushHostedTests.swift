import FirebaseAuth
import Foundation
import XCTest

/// Phone sign-in with app verification on, as on a phone: the backend's silent push reaches the
/// test host's device through push-receiver's device gateway and proves the app; no reCAPTCHA
/// (the test process shows none). The code is read from the SMS outbox, as suites written against
/// the Auth Emulator read it.
class SilentPushHostedTests: HostedTestCase {
    func testSilentPushProvesTheApp() async throws {
        let number = "+16505550142"
        let verificationID = try await PhoneAuthProvider.provider().verifyPhoneNumber(number, uiDelegate: nil)
        let code = try await smsCode(to: number)
        let credential = PhoneAuthProvider.provider().credential(withVerificationID: verificationID, verificationCode: code)
        let result = try await Auth.auth().signIn(with: credential)
        XCTAssertEqual(result.user.phoneNumber, number)
        XCTAssertNotNil(Auth.auth().apnsToken)
    }
}

/// The same sign-in when APNs drops the push (`authsim exec --fault drop`): the SDK waits the
/// backend's suggested timeout, then proves the app with reCAPTCHA, whose page the test host's
/// default presenter loads (HTTPS, under the CA the host's device trusts) and whose redirect comes
/// back to the app's URL scheme. XCTestHostRun runs this class in a run of its own.
class RecaptchaFallbackHostedTests: HostedTestCase {
    func testRecaptchaProvesTheAppWhenThePushIsLost() async throws {
        let number = "+16505550143"
        let verificationID = try await PhoneAuthProvider.provider().verifyPhoneNumber(number, uiDelegate: nil)
        let code = try await smsCode(to: number)
        let credential = PhoneAuthProvider.provider().credential(withVerificationID: verificationID, verificationCode: code)
        let result = try await Auth.auth().signIn(with: credential)
        XCTAssertEqual(result.user.phoneNumber, number)
    }
}
