import AuthBackend
import FirebaseAuth
import FirebaseCore
import Foundation
import Scenarios
import Testing
import Utilities

/// The claims of a JWT (unverified: the backend's JWKS tests do that).
func jwtClaims(_ token: String) -> [String: Any] {
    let parts = token.split(separator: ".")
    guard parts.count == 3, let bytes = Base64URL.decode(parts[1]) else { return [:] }
    return (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
}

/// The multi-factor guide's enrollment ("Add multi-factor authentication to your iOS app",
/// firebase.google.com/docs/auth/ios/multi-factor), as it writes it: completion handlers,
/// `getSessionWithCompletion`, the session passed on as an optional.
@MainActor
final class EnrollViewController {
    let check = CompletionCheck()
    /// The user reads the SMS.
    let readSMS: @MainActor (String) async -> String?

    init(readSMS: @escaping @MainActor (String) async -> String?) { self.readSMS = readSMS }

    /// The guide's enrollment for the signed-in user (read here, on the main actor: a `User` is not
    /// `Sendable`, as in 12.19).
    func enroll(phoneNumber: String, displayName: String) async -> (any Error)? {
        guard let user = Auth.auth().currentUser else { return AuthErrorCode.nullUser }
        return await withCheckedContinuation { (done: CheckedContinuation<(any Error)?, Never>) in
            user.multiFactor.getSessionWithCompletion({ (session, error) in
                // Send SMS verification code.
                PhoneAuthProvider.provider().verifyPhoneNumber(
                    phoneNumber,
                    uiDelegate: nil,
                    multiFactorSession: session) { (verificationId, error) in
                        self.check.called("verifyPhoneNumber(multiFactorSession:)")
                        if let error {
                            done.resume(returning: error)
                            return
                        }
                        // verificationId will be needed for enrollment completion.
                        Task { @MainActor in
                            let verificationCode = await self.readSMS(phoneNumber) ?? ""
                            let credential = PhoneAuthProvider.provider().credential(
                                withVerificationID: verificationId!,
                                verificationCode: verificationCode)
                            let assertion = PhoneMultiFactorGenerator.assertion(with: credential);
                            // Complete enrollment. This will update the underlying tokens
                            // and trigger ID token change listener.
                            user.multiFactor.enroll(with: assertion, displayName: displayName) { (error) in
                                self.check.called("enroll")
                                done.resume(returning: error)
                            }
                        }
                    }
            })
        }
    }
}

extension GuideCode {
    @Suite("Phone multi-factor, as the multi-factor and phone-auth guides write it, through every part")
    struct MultiFactorGuide {
        static let secondFactor = "+16505550123"

        /// Signs in with Apple (the first factor: Firebase allows multi-factor with every provider
        /// but phone) as the Apple guide builds the credential.
        static func signInWithApple(_ guide: GuideWorld, _ who: String) async throws -> AuthDataResult {
            let apple = try await guide.appleAuthorization(who)
            let credential = OAuthProvider.appleCredential(withIDToken: apple.idTokenString, rawNonce: apple.nonce, fullName: apple.fullName)
            return try await Auth.auth().signIn(with: credential)
        }

        /// The Apple credential, for the phone-auth guide's `signIn(with:)` snippet.
        static func appleCredential(_ guide: GuideWorld, _ who: String) async throws -> OAuthCredential {
            let apple = try await guide.appleAuthorization(who)
            return OAuthProvider.appleCredential(withIDToken: apple.idTokenString, rawNonce: apple.nonce, fullName: apple.fullName)
        }

        @Test("enroll: getSessionWithCompletion → verifyPhoneNumber(multiFactorSession:) behind the silent push → enroll(with:displayName:); enrolledFactors and the ID token name the factor")
        func enroll() async throws {
            try await withGuideWorld { guide in
                let user = try await Self.signInWithApple(guide, "grace").user
                #expect(user.multiFactor.enrolledFactors.isEmpty)
                let controller = await EnrollViewController { number in await guide.sms(to: number) }
                let before = Date()
                let error = await controller.enroll(phoneNumber: Self.secondFactor, displayName: "Work phone")
                #expect(error == nil, "\(String(describing: error))")
                await controller.check.expectEachOnce()
                #expect(guide.lastAppVerification == .silentPush)

                // As the SDK's enroll (MultiFactor.swift): a new User from the answer's tokens is the
                // current user; the one the app held keeps its old factors, as on a device.
                let current = try #require(Auth.auth().currentUser)
                #expect(current !== user && current.uid == user.uid)
                #expect(user.multiFactor.enrolledFactors.isEmpty, "the old User is not renewed")
                let factor = try #require(current.multiFactor.enrolledFactors.first as? PhoneMultiFactorInfo)
                #expect(current.multiFactor.enrolledFactors.count == 1)
                #expect(factor.displayName == "Work phone")
                #expect(factor.factorID == PhoneMultiFactorInfo.PhoneMultiFactorID)
                #expect(factor.phoneNumber == Self.secondFactor)
                #expect(abs(factor.enrollmentDate.timeIntervalSince(before)) < 60)
                #expect(!factor.uid.isEmpty)
                #expect(Auth.auth().currentUser?.multiFactor.enrolledFactors.first?.displayName == "Work phone")
                let firebase = jwtClaims(try await current.getIDToken())["firebase"] as? [String: Any]
                #expect(firebase?["sign_in_second_factor"] as? String == "phone")
                #expect(firebase?["second_factor_identifier"] as? String == factor.uid)
            }
        }

        @Test("sign in: the phone-auth guide's snippet takes the secondFactorRequired branch for an Apple first factor, loops over resolver.hints, and resolves with the SMS code")
        func guideSnippetResolves() async throws {
            try await withGuideWorld { guide in
                let enrolled = try await Self.signInWithApple(guide, "grace").user
                try await guide.toolkit.enrollSecondFactor(localId: enrolled.uid, phoneNumber: Self.secondFactor, displayName: "Work phone")
                try Auth.auth().signOut()

                let controller = await PhoneAuthViewController { prompt in
                    if prompt.hasPrefix("Select factor") { return "Work phone" }
                    return await guide.sms(to: Self.secondFactor)
                }
                let credential = try await Self.appleCredential(guide, "grace")
                let outcome = await controller.run { controller.signIn(with: credential) }
                #expect(outcome == .poppedAfterSecondFactor)
                #expect(await controller.prompts == ["Select factor to sign in\nWork phone ", "Verification code for Work phone"])
                await controller.check.expectEachOnce()
                #expect(await controller.check.calls.keys.sorted() == ["resolveSignIn", "signIn", "verifyPhoneNumber(with:)"])
                #expect(guide.lastAppVerification == .silentPush)

                let user = try #require(Auth.auth().currentUser)
                #expect(user.uid == enrolled.uid)
                let firebase = jwtClaims(try await user.getIDToken())["firebase"] as? [String: Any]
                #expect(firebase?["sign_in_provider"] as? String == "apple.com")
                #expect(firebase?["sign_in_second_factor"] as? String == "phone")
            }
        }

        @Test("the error's resolver: NSError in FIRAuthErrorDomain 17078 ERROR_SECOND_FACTOR_REQUIRED, hints with the number masked but the last four digits, session and auth")
        func resolverShape() async throws {
            try await withGuideWorld { guide in
                let enrolled = try await Self.signInWithApple(guide, "grace").user
                try await guide.toolkit.enrollSecondFactor(localId: enrolled.uid, phoneNumber: Self.secondFactor, displayName: "Work phone")
                try await guide.toolkit.enrollSecondFactor(localId: enrolled.uid, phoneNumber: "+447700900123", displayName: nil)
                try Auth.auth().signOut()
                do {
                    _ = try await Auth.auth().signIn(with: Self.appleCredential(guide, "grace"))
                    Issue.record("signed in without a second factor")
                } catch {
                    let authError = error as NSError
                    #expect(authError.domain == AuthErrorDomain)
                    #expect(authError.domain == "FIRAuthErrorDomain")
                    #expect(authError.code == AuthErrorCode.secondFactorRequired.rawValue)
                    #expect(authError.userInfo[AuthErrorUserInfoNameKey] as? String == "ERROR_SECOND_FACTOR_REQUIRED")
                    #expect(authError.localizedDescription == "Please complete a second factor challenge to finish signing into this account.")
                    let resolver = try #require(authError.userInfo[AuthErrorUserInfoMultiFactorResolverKey] as? MultiFactorResolver)
                    #expect(resolver.auth === Auth.auth())
                    let hints = resolver.hints.compactMap { $0 as? PhoneMultiFactorInfo }
                    #expect(hints.map(\.phoneNumber) == ["+*******0123", "+********0123"])
                    #expect(hints.map(\.displayName) == ["Work phone", nil])
                    #expect(Auth.auth().currentUser == nil)
                }
            }
        }

        @Test("the async forms: session(), verifyPhoneNumber with the session, enroll, resolveSignIn, unenroll(withFactorUID:); after unenrolling, Apple alone signs in")
        func asyncForms() async throws {
            try await withGuideWorld { guide in
                let user = try await Self.signInWithApple(guide, "grace").user
                let session = try await user.multiFactor.session()
                let enrollmentID = try await PhoneAuthProvider.provider().verifyPhoneNumber(Self.secondFactor, uiDelegate: nil, multiFactorSession: session)
                let code = try #require(await guide.sms(to: Self.secondFactor))
                try await user.multiFactor.enroll(with: PhoneMultiFactorGenerator.assertion(
                    with: PhoneAuthProvider.provider().credential(withVerificationID: enrollmentID, verificationCode: code)), displayName: "Phone")
                try Auth.auth().signOut()

                var resolver: MultiFactorResolver?
                do { _ = try await Auth.auth().signIn(with: Self.appleCredential(guide, "grace")) } catch {
                    resolver = (error as NSError).userInfo[AuthErrorUserInfoMultiFactorResolverKey] as? MultiFactorResolver
                }
                let hint = try #require(resolver?.hints.first as? PhoneMultiFactorInfo)
                let signInID = try await PhoneAuthProvider.provider().verifyPhoneNumber(with: hint, uiDelegate: nil, multiFactorSession: resolver?.session)
                let code2 = try #require(await guide.sms(to: Self.secondFactor))
                #expect(code2 != code || signInID != enrollmentID)
                let result = try await resolver!.resolveSignIn(with: PhoneMultiFactorGenerator.assertion(
                    with: PhoneAuthProvider.provider().credential(withVerificationID: signInID, verificationCode: code2)))
                #expect(result.user.uid == user.uid)
                #expect(Auth.auth().currentUser == result.user)

                try await result.user.multiFactor.unenroll(withFactorUID: hint.uid)
                // The backend's event for it, as the timeline keeps it.
                #expect(guide.timeline.all.compactMap(\.backend).contains(.secondFactorWithdrawn(uid: user.uid, enrollmentID: hint.uid)))
                let afterUnenroll = try #require(Auth.auth().currentUser)
                #expect(afterUnenroll !== result.user && afterUnenroll.multiFactor.enrolledFactors.isEmpty)
                #expect((jwtClaims(try await afterUnenroll.getIDToken())["firebase"] as? [String: Any])?["sign_in_second_factor"] == nil)
                try Auth.auth().signOut()
                let plain = try await Self.signInWithApple(guide, "grace")
                #expect(plain.user.uid == user.uid)
            }
        }

        /// The SDK's API test (SwiftApiTests/PhoneMultiFactorTests.swift 69-75) asserts `user ==
        /// Auth.auth().currentUser` after enrolling and unenrolls `user.multiFactor.enrolledFactors.first!`;
        /// on a device the SDK's enroll has made a new current User by then, so that test would fail
        /// (its old user has no factors). This unenrolls through the current user, as an app must.
        @Test("unenroll with the completion form through the current user (a new User after enroll); each completion once, on the main queue")
        func unenrollCompletion() async throws {
            try await withGuideWorld { guide in
                let user = try await Self.signInWithApple(guide, "grace").user
                let controller = await EnrollViewController { number in await guide.sms(to: number) }
                #expect(await controller.enroll(phoneNumber: Self.secondFactor, displayName: "phone1") == nil)
                let check = CompletionCheck()
                #expect(user !== Auth.auth().currentUser)
                let error: (any Error)? = await withCheckedContinuation { done in
                    Task { @MainActor in
                        let current = Auth.auth().currentUser!
                        current.multiFactor.unenroll(with: (current.multiFactor.enrolledFactors.first)!, completion: { error in
                            check.called("unenroll")
                            #expect(Auth.auth().currentUser?.multiFactor.enrolledFactors.count == 0)
                            done.resume(returning: error)
                        })
                    }
                }
                #expect(error == nil)
                await check.expectEachOnce()
            }
        }

        @Test("a test number as second factor in test mode: no push, no SMS, its fixed code")
        func testNumberSecondFactor() async throws {
            var configuration = BackendConfiguration()
            configuration.testPhoneNumbers = ["+16505554567": "123456"]
            try await withGuideWorld(configuration: configuration) { guide in
                let user = try await Self.signInWithApple(guide, "grace").user
                Auth.auth().settings?.isAppVerificationDisabledForTesting = true
                let session = try await user.multiFactor.session()
                let id = try await PhoneAuthProvider.provider().verifyPhoneNumber("+16505554567", uiDelegate: nil, multiFactorSession: session)
                try await user.multiFactor.enroll(with: PhoneMultiFactorGenerator.assertion(
                    with: PhoneAuthProvider.provider().credential(withVerificationID: id, verificationCode: "123456")), displayName: "Test")
                #expect(guide.lastAppVerification == .testMode)
                #expect(await guide.toolkit.messages.isEmpty)
                #expect((Auth.auth().currentUser?.multiFactor.enrolledFactors.first as? PhoneMultiFactorInfo)?.phoneNumber == "+16505554567")
            }
        }

        // MARK: Bad input: the SDK's code, and a message that says what was wrong

        @Test("the same number enrolled twice: secondFactorAlreadyEnrolled (17087) before any code is sent")
        func sameNumberTwice() async throws {
            try await withGuideWorld { guide in
                let user = try await Self.signInWithApple(guide, "grace").user
                let controller = await EnrollViewController { number in await guide.sms(to: number) }
                #expect(await controller.enroll(phoneNumber: Self.secondFactor, displayName: "Work phone") == nil)
                let sent = await guide.toolkit.messages.count
                let error = await controller.enroll(phoneNumber: Self.secondFactor, displayName: "Again") as NSError?
                #expect(error?.code == AuthErrorCode.secondFactorAlreadyEnrolled.rawValue)
                #expect(error?.userInfo[AuthErrorUserInfoNameKey] as? String == "ERROR_SECOND_FACTOR_ALREADY_ENROLLED")
                #expect(error?.localizedDescription == "Phone number already enrolled as second factor for this account.")
                #expect(await guide.toolkit.messages.count == sent)
                #expect(Auth.auth().currentUser?.multiFactor.enrolledFactors.count == 1)
            }
        }

        @Test("an enrollment ID the user does not have: multiFactorInfoNotFound (17084) naming it; the factors are untouched")
        func unknownEnrollment() async throws {
            try await withGuideWorld { guide in
                let user = try await Self.signInWithApple(guide, "grace").user
                try await guide.toolkit.enrollSecondFactor(localId: user.uid, phoneNumber: Self.secondFactor, displayName: "Work phone")
                do {
                    try await user.multiFactor.unenroll(withFactorUID: "not-an-enrollment")
                    Issue.record("unenrolled a factor that does not exist")
                } catch {
                    #expect((error as NSError).code == AuthErrorCode.multiFactorInfoNotFound.rawValue)
                    #expect((error as NSError).localizedDescription.contains("not-an-enrollment"))
                }
                #expect(await guide.toolkit.allUsers.first { $0.localId == user.uid }?.mfaEnrollments?.count == 1)
            }
        }

        @Test("a malformed pending credential, a spent one, and a session without a chosen hint: 17083, 17083 and 17082, each saying why")
        func badPendingCredentials() async throws {
            try await withGuideWorld { guide in
                let enrolled = try await Self.signInWithApple(guide, "grace").user
                try await guide.toolkit.enrollSecondFactor(localId: enrolled.uid, phoneNumber: Self.secondFactor, displayName: "Work phone")
                try Auth.auth().signOut()
                var caught: NSError?
                do { _ = try await Auth.auth().signIn(with: Self.appleCredential(guide, "grace")) } catch { caught = error as NSError }
                let resolver = try #require(caught?.userInfo[AuthErrorUserInfoMultiFactorResolverKey] as? MultiFactorResolver)
                let hint = try #require(resolver.hints.first as? PhoneMultiFactorInfo)

                // Malformed: not a credential this backend issued (the SDK's own unit tests build resolvers this way).
                let forged = forgedResolver(like: resolver)
                do {
                    _ = try await PhoneAuthProvider.provider().verifyPhoneNumber(with: hint, uiDelegate: nil, multiFactorSession: forged.session)
                    Issue.record("a forged pending credential got a code")
                } catch {
                    #expect((error as NSError).code == AuthErrorCode.invalidMultiFactorSession.rawValue)
                    #expect((error as NSError).userInfo[AuthErrorUserInfoNameKey] as? String == "ERROR_INVALID_MULTI_FACTOR_SESSION")
                    #expect((error as NSError).localizedDescription == "The MFA pending credential is not one this backend issued.")
                }

                // No hint chosen: the session names no factor, as verifyPhoneNumber(_:uiDelegate:multiFactorSession:) sends it.
                do {
                    _ = try await PhoneAuthProvider.provider().verifyPhoneNumber(Self.secondFactor, uiDelegate: nil, multiFactorSession: resolver.session)
                    Issue.record("a code without a factor")
                } catch {
                    #expect((error as NSError).code == AuthErrorCode.missingMultiFactorInfo.rawValue)
                    #expect((error as NSError).localizedDescription == "No second factor identifier is provided.")
                }

                // Spent: resolve once, then the same resolver again.
                let id = try await PhoneAuthProvider.provider().verifyPhoneNumber(with: hint, uiDelegate: nil, multiFactorSession: resolver.session)
                let code = try #require(await guide.sms(to: Self.secondFactor))
                _ = try await resolver.resolveSignIn(with: PhoneMultiFactorGenerator.assertion(
                    with: PhoneAuthProvider.provider().credential(withVerificationID: id, verificationCode: code)))
                do {
                    _ = try await PhoneAuthProvider.provider().verifyPhoneNumber(with: hint, uiDelegate: nil, multiFactorSession: resolver.session)
                    Issue.record("a spent pending credential got a code")
                } catch {
                    #expect((error as NSError).code == AuthErrorCode.invalidMultiFactorSession.rawValue)
                    #expect((error as NSError).localizedDescription.contains("already used"))
                }
            }
        }

        @Test("a phone first factor for an account with a second factor: unsupportedFirstFactor (17089), as the service answers; no code is sent")
        func phoneFirstFactor() async throws {
            try await withGuideWorld { guide in
                let user = try await Self.signInWithApple(guide, "grace").user
                try await guide.toolkit.setPhoneNumber(localId: user.uid, phoneNumber: "+16505551234")
                try await guide.toolkit.enrollSecondFactor(localId: user.uid, phoneNumber: Self.secondFactor, displayName: "Work phone")
                try Auth.auth().signOut()
                let controller = await PhoneAuthViewController { _ in nil }
                let outcome = await controller.run { controller.sendCode("+16505551234") }
                #expect(outcome == .message("A phone number cannot be set as a first factor on an SMS based MFA user."))
                #expect(await guide.toolkit.messages.isEmpty)
            }
        }
    }
}
