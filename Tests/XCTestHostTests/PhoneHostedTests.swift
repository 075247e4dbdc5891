import FirebaseAuth
import Foundation
import XCTest

/// Phone sign-in with the project's test numbers and app verification turned off, as the SDK's
/// `PhoneAuthTests`; a second factor, as its `PhoneMultiFactorTests` meant to.
class PhoneHostedTests: HostedTestCase {
    /// Project/auth_export/config.json's test numbers and their codes.
    let testNumber = "+15555550100"
    let testCode = "654321"

    func testTestNumberSignsInWithACompletionHandler() {
        Auth.auth().settings?.isAppVerificationDisabledForTesting = true
        let auth = Auth.auth()
        let expectation = self.expectation(description: "Signed in with the test number.")
        PhoneAuthProvider.provider().verifyPhoneNumber(testNumber, uiDelegate: nil) { verificationID, error in
            XCTAssertNil(error)
            let credential = PhoneAuthProvider.provider().credential(withVerificationID: verificationID ?? "",
                                                                     verificationCode: self.testCode)
            auth.signIn(with: credential) { result, error in
                XCTAssertNil(error)
                XCTAssertEqual(result?.user.phoneNumber, self.testNumber)
                expectation.fulfill()
            }
        }
        waitForExpectations(timeout: Self.timeout)
    }

    func testWrongCodeIsInvalidVerificationCode() async throws {
        Auth.auth().settings?.isAppVerificationDisabledForTesting = true
        let verificationID = try await PhoneAuthProvider.provider().verifyPhoneNumber(testNumber, uiDelegate: nil)
        let credential = PhoneAuthProvider.provider().credential(withVerificationID: verificationID, verificationCode: "000000")
        do {
            try await Auth.auth().signIn(with: credential)
            XCTFail("signed in with a wrong code")
        } catch {
            XCTAssertEqual((error as NSError).code, AuthErrorCode.invalidVerificationCode.rawValue)
        }
    }

    func testSeededSecondFactorResolvesTheSignIn() async throws {
        Auth.auth().settings?.isAppVerificationDisabledForTesting = true
        let auth = Auth.auth()
        do {
            try await auth.signIn(withEmail: "mfa@example.com", password: "battery-staple")
            XCTFail("signed in without the second factor")
        } catch let error as NSError where error.code == AuthErrorCode.secondFactorRequired.rawValue {
            let resolver = try XCTUnwrap(error.userInfo[AuthErrorUserInfoMultiFactorResolverKey] as? MultiFactorResolver)
            let hint = try XCTUnwrap(resolver.hints.first as? PhoneMultiFactorInfo)
            XCTAssertEqual(hint.displayName, "Work phone")
            let verificationID = try await PhoneAuthProvider.provider().verifyPhoneNumber(with: hint, uiDelegate: nil,
                                                                                          multiFactorSession: resolver.session)
            let credential = PhoneAuthProvider.provider().credential(withVerificationID: verificationID, verificationCode: "112233")
            let result = try await resolver.resolveSignIn(with: PhoneMultiFactorGenerator.assertion(with: credential))
            XCTAssertEqual(result.user.uid, "seeded-mfa-user")
            XCTAssertEqual(auth.currentUser?.multiFactor.enrolledFactors.count, 1)
        }
    }
}
