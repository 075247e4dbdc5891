import AuthBackend
import DeviceOS
import FirebaseAuthCore
import FirebaseCore
import Foundation
import Scenarios
import Testing

/// `Auth.tenantID` as FirebaseAuth 12.19 uses it: each request whose RPC class writes `tenantId`
/// carries the Auth's (Backend/IdentityToolkitRequest.swift 63; SignUpNewUserRequest.swift 115,
/// VerifyPasswordRequest.swift 101; GetAccountInfoRequest writes none), the user signed in is
/// of it (User.swift 1104), and `updateCurrentUser` refuses a user of another tenant
/// (Auth.swift 1965, `tenantIDMismatch` 17072).
@Suite("Auth.tenantID: requests, users and updateCurrentUser as 12.19 has them")
struct TenantTests {
    @Test("a tenant's sign-up carries tenantId, its user and ID token name the tenant, the project's sign-in does not find it, and another tenant's Auth refuses it")
    func tenantSignIn() async throws {
        try await withWorld { world, _ in
            let (auth, recording) = try await recordingApp(world)
            auth.tenantID = "tenant-1"
            let user = try await auth.createUser(withEmail: "ada@example.com", password: "secret1").user
            #expect(user.tenantID == "tenant-1")
            #expect(requestBodies(recording, "signupNewUser").first?["tenantId"] as? String == "tenant-1")
            #expect(requestBodies(recording, "getAccountInfo").allSatisfy { $0["tenantId"] == nil }, "the SDK's lookup sends no tenantId")
            let firebase = try await user.getIDTokenResult().claims["firebase"] as? [String: Any]
            #expect(firebase?["tenant"] as? String == "tenant-1")
            let kept = try #require(await world.toolkit?.allUsers.first { $0.localId == user.uid })
            #expect(kept.tenantId == "tenant-1")
            // The keychain keeps the tenant with the user.
            #expect(try auth.getStoredUser(forAccessGroup: nil)?.tenantID == "tenant-1")

            // The same password in the project's own users finds no one.
            auth.tenantID = nil
            _ = await expectAuthError { try await auth.signIn(withEmail: "ada@example.com", password: "secret1") }
            auth.tenantID = "tenant-1"
            let again = try await auth.signIn(withEmail: "ada@example.com", password: "secret1").user
            #expect(again.uid == user.uid && requestBodies(recording, "verifyPassword").last?["tenantId"] as? String == "tenant-1")

            // An Auth of another tenant (or of the project) refuses the user.
            auth.tenantID = "tenant-2"
            _ = await expectAuthError(.tenantIDMismatch) { try await auth.updateCurrentUser(user) }
            auth.tenantID = nil
            _ = await expectAuthError(.tenantIDMismatch) { try await auth.updateCurrentUser(user) }
            auth.tenantID = "tenant-1"
            try await auth.updateCurrentUser(user)
            #expect(auth.currentUser === user)
        }
    }
}
