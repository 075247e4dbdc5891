@testable import FirebaseAuthCore
import TestSupport
import AuthBackend
import Foundation
import IdentityToolkitAPI
import Scenarios
import Testing
import Utilities

@Suite("Multi-factor on the backend over HTTP: every error the SDK maps, from the service's requests")
struct MultiFactorBackendTests {
    /// Each multi-factor error, provoked by a request as a client sends it (through URLSession),
    /// then read as the SDK reads it (FirebaseAuth 12.19 `Backend/AuthBackend.swift`
    /// `clientError(withServerErrorMessage:)`).
    @Test("17081–17084 and 17087–17089 from the backend, each with the SDK's code; 17085 and 17086 as the SDK maps them")
    func everyError() async throws {
        var configuration = BackendConfiguration()
        configuration.testPhoneNumbers = ["+16505554567": "123456"]
        try await withWorld(configuration: configuration) { world, _ in
            let toolkit = try #require(world.toolkit)
            let key = toolkit.configuration.apiKey
            let v2 = "\(world.backendURL)/identitytoolkit.googleapis.com/v2/accounts"

            // An Apple user (email verified) with a second factor; a phone user; a pending credential.
            let auth = appleApp(world)
            func appleCredential(_ who: String) async throws -> OAuthCredential {
                let raw = AppleNonce.random()
                let sheet = try await world.appleSheet.authorize(clientID: AppProfile().bundleID, appleUser: who, nonce: AppleNonce.sha256(raw))
                return OAuthProvider.appleCredential(withIDToken: sheet.identityToken, rawNonce: raw, fullName: sheet.fullName)
            }
            let apple = try await auth.signIn(with: appleCredential("grace")).user
            let appleToken = try await apple.getIDToken()
            try await toolkit.enrollSecondFactor(localId: apple.uid, phoneNumber: "+16505550123", displayName: "Work")
            for index in 1...4 { try await toolkit.enrollSecondFactor(localId: apple.uid, phoneNumber: "+1650555020\(index)", displayName: nil) }
            var pending = ""
            do { _ = try await auth.signIn(with: appleCredential("grace")) } catch {
                pending = AuthError(thrown: error)?.resolver?.mfaPendingCredential ?? ""
            }
            #expect(!pending.isEmpty)
            let phoneUser = try await toolkit.call(ToolkitCalls.signInWithPhoneNumber, VerifyPhoneNumberRequest(
                sessionInfo: try await toolkit.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: "+16505554567")).sessionInfo,
                code: "123456"))

            let cases: [(String, String, String, AuthErrorCode)] = [
                ("mfaSignIn:start", #"{"mfaEnrollmentId":"x","phoneSignInInfo":{}}"#, "MISSING_MFA_PENDING_CREDENTIAL", .missingMultiFactorSession),
                ("mfaSignIn:start", #"{"mfaPendingCredential":"\#(pending)"}"#, "MISSING_MFA_ENROLLMENT_ID", .missingMultiFactorInfo),
                ("mfaSignIn:start", #"{"mfaPendingCredential":"forged","mfaEnrollmentId":"x"}"#, "INVALID_MFA_PENDING_CREDENTIAL", .invalidMultiFactorSession),
                ("mfaSignIn:start", #"{"mfaPendingCredential":"\#(pending)","mfaEnrollmentId":"nope"}"#, "MFA_ENROLLMENT_NOT_FOUND", .multiFactorInfoNotFound),
                ("mfaEnrollment:start", #"{"idToken":"\#(appleToken)","phoneEnrollmentInfo":{"phoneNumber":"+16505550123"}}"#, "SECOND_FACTOR_EXISTS", .secondFactorAlreadyEnrolled),
                ("mfaEnrollment:start", #"{"idToken":"\#(appleToken)","phoneEnrollmentInfo":{"phoneNumber":"+16505550299"}}"#, "SECOND_FACTOR_LIMIT_EXCEEDED", .maximumSecondFactorCountExceeded),
                ("mfaEnrollment:start", #"{"idToken":"\#(phoneUser.idToken ?? "")","phoneEnrollmentInfo":{"phoneNumber":"+16505550299"}}"#, "UNSUPPORTED_FIRST_FACTOR", .unsupportedFirstFactor),
                ("mfaEnrollment:withdraw", #"{"idToken":"\#(appleToken)","mfaEnrollmentId":"nope"}"#, "MFA_ENROLLMENT_NOT_FOUND", .multiFactorInfoNotFound),
                ("mfaSignIn:finalize", #"{"phoneVerificationInfo":{"sessionInfo":"s","code":"1"}}"#, "MISSING_MFA_PENDING_CREDENTIAL", .missingMultiFactorSession),
            ]
            for (path, body, code, expected) in cases {
                let (status, answer) = try await post("\(v2)/\(path)?key=\(key)", body)
                let message = try #require(errorMessage(answer), "\(path) \(body)")
                #expect(status == 400, "\(path) \(code)")
                #expect(message.hasPrefix(code), "\(path): \(message)")
                #expect(AuthError.fromServer(message)?.code == expected, "\(message)")
            }
            // The service's codes the backend has no cause to give (admin-only and email verification
            // are not modelled for phone and Apple users): mapped as the SDK maps them.
            #expect(AuthError.fromServer("ADMIN_ONLY_OPERATION")?.code == .adminRestrictedOperation)
            #expect(AuthError.fromServer("UNVERIFIED_EMAIL : Need to verify email first before enrolling second factors.")?.code == .unverifiedEmail)
        }
    }

    @Test("with multi-factor off for the project, its calls are OPERATION_NOT_ALLOWED (17006), as the service says it")
    func disabled() async throws {
        var configuration = BackendConfiguration()
        configuration.multiFactorEnabled = false
        try await withWorld(configuration: configuration) { world, _ in
            let (status, answer) = try await post(
                "\(world.backendURL)/identitytoolkit.googleapis.com/v2/accounts/mfaSignIn:start?key=\(configuration.apiKey)",
                #"{"mfaPendingCredential":"x","mfaEnrollmentId":"y"}"#)
            #expect(status == 400)
            #expect(errorMessage(answer) == "OPERATION_NOT_ALLOWED : SMS based MFA not enabled.")
        }
    }

    @Test("a pending credential is single-use and expires after 10 minutes; a code for enrollment cannot finish a sign-in")
    func pendingCredentialLifetime() async throws {
        let clock = ManualWallClock(Date())
        var configuration = BackendConfiguration()
        configuration.testPhoneNumbers = ["+16505550123": "123456"]
        try await withWorld(configuration: configuration, backendClock: clock) { world, _ in
            let toolkit = try #require(world.toolkit)
            let raw = AppleNonce.random()
            let sheet = try await world.appleSheet.authorize(clientID: AppProfile().bundleID, appleUser: "grace", nonce: AppleNonce.sha256(raw))
            let first = try await toolkit.signInWithIdp(VerifyAssertionRequest(postBody: "providerId=apple.com&id_token=\(sheet.identityToken)&nonce=\(raw)"))
            let uid = try #require(first.localId)
            let enrollment = try await toolkit.enrollSecondFactor(localId: uid, phoneNumber: "+16505550123", displayName: nil)
            let sheet2 = try await world.appleSheet.authorize(clientID: AppProfile().bundleID, appleUser: "grace", nonce: AppleNonce.sha256(raw))
            let second = try await toolkit.signInWithIdp(VerifyAssertionRequest(postBody: "providerId=apple.com&id_token=\(sheet2.identityToken)&nonce=\(raw)"))
            #expect(second.idToken == nil)
            #expect(second.mfaInfo?.first?.phoneInfo == "+*******0123")
            let pending = try #require(second.mfaPendingCredential)

            let start = try await toolkit.call(ToolkitCalls.mfaSignInStart, StartMFASignInRequest(mfaPendingCredential: pending, mfaEnrollmentId: enrollment.id,
                                                                                phoneSignInInfo: StartMFAPhoneRequestInfo(phoneNumber: "+*******0123")))
            let session = try #require(start.phoneResponseInfo?.sessionInfo)
            clock.advance(by: 601)
            await #expect(throws: IdentityToolkitError(.invalidMFAPendingCredential)) {
                _ = try await toolkit.call(ToolkitCalls.mfaSignInFinalize, FinalizeMFASignInRequest(
                    mfaPendingCredential: pending, phoneVerificationInfo: FinalizeMFAPhoneRequestInfo(sessionInfo: session, code: "123456")))
            }
        }
    }
}
