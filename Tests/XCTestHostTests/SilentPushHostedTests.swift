import FirebaseAuth
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
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

    /// The last code the backend texted to `number`: `GET /emulator/v1/projects/{project}/verificationCodes`.
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
}
