import Foundation

// FirebaseAuth 12.19 calls that apps often make and authsim does not simulate, declared with the
// SDK's signatures (FirebaseAuth/Sources/Swift/Auth/Auth.swift) and unavailable: code that calls
// them fails to compile here with a message that names the call and says it is not simulated,
// rather than "no member". Every other call the SDK has and authsim lacks is simply absent, which
// fails to compile too. (docs/app-code-on-linux.md)

private let notSimulated = "is not simulated by authsim; keep this call out of the code you test on Linux"

extension Auth {
    @available(*, unavailable, message: "Email link sign-in is not simulated by authsim (email and password is); keep this call out of the code you test on Linux")
    public func signIn(withEmail email: String, link: String) async throws -> AuthDataResult { fatalError(notSimulated) }

    @available(*, unavailable, message: "Email link sign-in is not simulated by authsim (email and password is); keep this call out of the code you test on Linux")
    public func signIn(withEmail email: String, link: String, completion: ((AuthDataResult?, (any Error)?) -> Void)?) { fatalError(notSimulated) }

    @available(*, unavailable, message: "Email link sign-in is not simulated by authsim (email and password is); keep this call out of the code you test on Linux")
    public func sendSignInLink(toEmail email: String, actionCodeSettings: ActionCodeSettings) async throws { fatalError(notSimulated) }

    @available(*, unavailable, message: "Email link sign-in is not simulated by authsim (email and password is); keep this call out of the code you test on Linux")
    public func isSignIn(withEmailLink link: String) -> Bool { fatalError(notSimulated) }

    @available(*, unavailable, message: "useAppLanguage() is not simulated by authsim; set Auth.auth().languageCode instead")
    public func useAppLanguage() { fatalError(notSimulated) }
}

extension EmailAuthProvider {
    @available(*, unavailable, message: "Email link sign-in is not simulated by authsim (email and password is); keep this call out of the code you test on Linux")
    public static func credential(withEmail email: String, link: String) -> AuthCredential { fatalError(notSimulated) }
}
