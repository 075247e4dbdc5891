import AuthBackend
import FirebaseAuth
import FirebaseCore
import Foundation
import Scenarios
import Testing

/// The view controller of "Authenticate with Firebase on Apple platforms using a phone number"
/// (firebase.google.com/docs/auth/ios/phone-auth), its Swift pasted as the guide writes it: the
/// completion-handler calls, `error as NSError`, the `secondFactorRequired` branch with its
/// resolver loop over `hints`. The guide's UI helpers (`showMessagePrompt`,
/// `showTextInputPrompt`, `navigationController`) are played by the test: a prompt is answered
/// the way the user would (the code they read off the SMS, the factor they pick).
@MainActor
final class PhoneAuthViewController {
    /// The guide's flag.
    let isMFAEnabled = true
    /// Answers a prompt, as the user would; nil: the user cancels.
    let user: @MainActor (String) async -> String?
    /// How the flow ended.
    enum Outcome: Equatable {
        case signedIn(uid: String)
        case message(String)
        case multiFactorFailed(String)
        case poppedAfterSecondFactor
    }
    private var finish: CheckedContinuation<Outcome, Never>?
    private(set) var prompts: [String] = []
    let check = CompletionCheck()

    init(user: @escaping @MainActor (String) async -> String?) { self.user = user }

    /// Runs one of the guide's snippets until it ends in an outcome.
    func run(_ snippet: @MainActor () -> Void) async -> Outcome {
        await withCheckedContinuation { continuation in
            finish = continuation
            snippet()
        }
    }

    private func end(_ outcome: Outcome) {
        finish?.resume(returning: outcome)
        finish = nil
    }

    // MARK: The guide's UI helpers, played by the test

    func showMessagePrompt(_ message: String) { end(.message(message)) }

    func showTextInputPrompt(withMessage message: String, completionBlock: @escaping @MainActor (Bool, String?) -> Void) {
        prompts.append(message)
        Task { @MainActor in
            let answer = await user(message)
            completionBlock(answer != nil, answer)
        }
    }

    /// `print` in the guide: the flow ends there.
    func print(_ line: String) { end(.multiFactorFailed(line)) }

    final class NavigationController {
        let popped: @MainActor () -> Void
        init(popped: @escaping @MainActor () -> Void) { self.popped = popped }
        @MainActor func popViewController(animated: Bool) { popped() }
    }
    lazy var navigationController: NavigationController? = NavigationController { [weak self] in self?.end(.poppedAfterSecondFactor) }

    // MARK: The guide's code

    /// "Send a verification code to the user's phone".
    func sendCode(_ phoneNumber: String) {
        PhoneAuthProvider.provider()
            .verifyPhoneNumber(phoneNumber, uiDelegate: nil) { verificationID, error in
                self.check.called("verifyPhoneNumber")
                if let error = error {
                    self.showMessagePrompt(error.localizedDescription)
                    return
                }
                // Sign in using the verificationID and the code sent to the user
                UserDefaults.standard.set(verificationID, forKey: "authVerificationID")
                self.showTextInputPrompt(withMessage: "Verification code") { _, verificationCode in
                    let verificationID = UserDefaults.standard.string(forKey: "authVerificationID")
                    let credential = PhoneAuthProvider.provider().credential(
                        withVerificationID: verificationID!,
                        verificationCode: verificationCode!
                    )
                    self.signIn(with: credential)
                }
            }
    }

    /// "Sign in the user with the verification code", with its multi-factor branch.
    func signIn(with credential: AuthCredential) {
        Auth.auth().signIn(with: credential) { authResult, error in
            self.check.called("signIn")
            if let error = error {
                let authError = error as NSError
                if self.isMFAEnabled, authError.code == AuthErrorCode.secondFactorRequired.rawValue {
                    // The user is a multi-factor user. Second factor challenge is required.
                    let resolver = authError
                        .userInfo[AuthErrorUserInfoMultiFactorResolverKey] as! MultiFactorResolver
                    var displayNameString = ""
                    for tmpFactorInfo in resolver.hints {
                        displayNameString += tmpFactorInfo.displayName ?? ""
                        displayNameString += " "
                    }
                    self.showTextInputPrompt(
                        withMessage: "Select factor to sign in\n\(displayNameString)",
                        completionBlock: { userPressedOK, displayName in
                            var selectedHint: PhoneMultiFactorInfo?
                            for tmpFactorInfo in resolver.hints {
                                if displayName == tmpFactorInfo.displayName {
                                    selectedHint = tmpFactorInfo as? PhoneMultiFactorInfo
                                }
                            }
                            PhoneAuthProvider.provider()
                                .verifyPhoneNumber(with: selectedHint!, uiDelegate: nil,
                                                   multiFactorSession: resolver
                                                       .session) { verificationID, error in
                                    self.check.called("verifyPhoneNumber(with:)")
                                    if error != nil {
                                        self.print(
                                            "Multi factor start sign in failed. Error: \(error.debugDescription)"
                                        )
                                    } else {
                                        self.showTextInputPrompt(
                                            withMessage: "Verification code for \(selectedHint?.displayName ?? "")",
                                            completionBlock: { userPressedOK, verificationCode in
                                                let credential: PhoneAuthCredential? = PhoneAuthProvider.provider()
                                                    .credential(withVerificationID: verificationID!,
                                                                verificationCode: verificationCode!)
                                                let assertion: MultiFactorAssertion? = PhoneMultiFactorGenerator
                                                    .assertion(with: credential!)
                                                resolver.resolveSignIn(with: assertion!) { authResult, error in
                                                    self.check.called("resolveSignIn")
                                                    if error != nil {
                                                        self.print(
                                                            "Multi factor finanlize sign in failed. Error: \(error.debugDescription)"
                                                        )
                                                    } else {
                                                        self.navigationController?.popViewController(animated: true)
                                                    }
                                                }
                                            }
                                        )
                                    }
                                }
                        }
                    )
                } else {
                    self.showMessagePrompt(error.localizedDescription)
                    return
                }
                // ...
                return
            }
            // User is signed in
            self.end(.signedIn(uid: authResult!.user.uid))
        }
    }

    /// "Test with fictional phone numbers": test mode, the fixed code, no SMS.
    func signInWithTestNumber(_ phoneNumber: String, testVerificationCode: String) {
        Auth.auth().settings?.isAppVerificationDisabledForTesting = true
        PhoneAuthProvider.provider().verifyPhoneNumber(phoneNumber, uiDelegate: nil) {
            verificationID, error in
            self.check.called("verifyPhoneNumber")
            if let error {
                self.showMessagePrompt(error.localizedDescription)
                return
            }
            let credential = PhoneAuthProvider.provider().credential(withVerificationID: verificationID ?? "",
                                                                     verificationCode: testVerificationCode)
            Auth.auth().signIn(with: credential) { authData, error in
                self.check.called("signIn")
                if let error {
                    self.showMessagePrompt(error.localizedDescription)
                    return
                }
                self.end(.signedIn(uid: authData!.user.uid))
            }
        }
    }
}

extension GuideCode {
    @Suite("Phone sign-in, as the phone-auth guide writes it")
    struct PhoneAuthGuide {
        @Test("the guide's completion-handler sign-in: silent push, the SMS code through UserDefaults, signIn; each completion once, on the main queue")
        func completionSignIn() async throws {
            try await withGuideWorld { guide in
                let number = "+16505551234"
                let controller = await PhoneAuthViewController { _ in await guide.sms(to: number) }
                let outcome = await controller.run { controller.sendCode(number) }
                guard case .signedIn(let uid) = outcome else { Issue.record("ended with \(outcome)"); return }
                #expect(Auth.auth().currentUser?.uid == uid)
                #expect(Auth.auth().currentUser?.phoneNumber == number)
                #expect(Auth.auth().currentUser?.providerData.map(\.providerID) == ["phone"])
                #expect(guide.lastAppVerification == .silentPush)
                await controller.check.expectEachOnce()
                #expect(await controller.check.calls.keys.sorted() == ["signIn", "verifyPhoneNumber"])
                try Auth.auth().signOut()
                #expect(Auth.auth().currentUser == nil)
            }
        }

        @Test("the async forms the guide shows beside them; the SMS is in the language set on Auth; the same user signs in again")
        func asyncSignIn() async throws {
            try await withGuideWorld { guide in
                let number = "+16505551234"
                Auth.auth().languageCode = "fr"
                let verificationID = try await PhoneAuthProvider.provider().verifyPhoneNumber(number, uiDelegate: nil)
                let message = try #require(await guide.toolkit.messages.last)
                #expect(message.languageCode == "fr")
                #expect(message.text == "\(message.code) est votre code de validation.")
                let credential = PhoneAuthProvider.provider().credential(withVerificationID: verificationID, verificationCode: message.code)
                let first = try await Auth.auth().signIn(with: credential)
                #expect(first.additionalUserInfo?.isNewUser == true)
                #expect(first.additionalUserInfo?.providerID == "phone")
                try Auth.auth().signOut()

                let again = try await PhoneAuthProvider.provider().verifyPhoneNumber(number, uiDelegate: nil)
                let code = try #require(await guide.sms(to: number))
                let second = try await Auth.auth().signIn(with: PhoneAuthProvider.provider().credential(withVerificationID: again,
                                                                                                        verificationCode: code))
                #expect(second.additionalUserInfo?.isNewUser == false)
                #expect(second.user.uid == first.user.uid)
            }
        }

        @Test("the guide's test-number snippet: settings?.isAppVerificationDisabledForTesting, the fixed code, no push, no SMS")
        func testNumber() async throws {
            var configuration = BackendConfiguration()
            configuration.testPhoneNumbers = ["+16505554567": "123456"]
            try await withGuideWorld(configuration: configuration) { guide in
                let controller = await PhoneAuthViewController { _ in nil }
                let outcome = await controller.run { controller.signInWithTestNumber("+16505554567", testVerificationCode: "123456") }
                guard case .signedIn = outcome else { Issue.record("ended with \(outcome)"); return }
                #expect(await guide.toolkit.messages.isEmpty)
                #expect(guide.lastAppVerification == .testMode)
                await controller.check.expectEachOnce()
            }
        }

        @Test("a wrong code reaches the guide's error branch as the SDK's NSError: FIRAuthErrorDomain, 17044, its name and message")
        func wrongCode() async throws {
            try await withGuideWorld { guide in
                let controller = await PhoneAuthViewController { _ in "000000" }
                let outcome = await controller.run { controller.sendCode("+16505551234") }
                // The SDK's words for 17044 (AuthErrors.swift kErrorInvalidVerificationCode), "multifactor" and all.
                #expect(outcome == .message(sdkDescription(.invalidVerificationCode)))
                #expect(sdkDescription(.invalidVerificationCode).hasPrefix("The multifactor verification code used to create the auth credential is invalid."))
                await controller.check.expectEachOnce()
            }
        }
    }
}
