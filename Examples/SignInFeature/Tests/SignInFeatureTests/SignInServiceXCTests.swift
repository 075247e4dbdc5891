// The same harness from XCTest, as a team whose tests are XCTestCases writes it.
#if canImport(AuthsimTesting)
import AuthsimTesting
import FirebaseCore
import SignInFeature
import XCTest

final class SignInServiceXCTests: XCTestCase {
    func testSignsInBySilentPush() async throws {
        try await Simulation.run(.silentPushWorks) { simulation in
            FirebaseApp.configure()
            let service = SignInService()
            let verificationID = try await service.sendCode(to: "+16505550000")
            let result = try await service.signIn(verificationID: verificationID, code: try await simulation.smsCode(to: "+16505550000"))
            guard case .signedIn(let uid) = result else { return XCTFail("a second factor was asked for") }
            XCTAssertEqual(service.currentUserID, uid)
            XCTAssertEqual(simulation.lastAppVerification, .silentPush)
        }
    }
}
#endif
