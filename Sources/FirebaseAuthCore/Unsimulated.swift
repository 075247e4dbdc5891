import Foundation

// FirebaseAuth 12.19 calls that apps often make and authsim does not simulate, declared with the
// SDK's signatures (FirebaseAuth/Sources/Swift/Auth/Auth.swift) and unavailable: code that calls
// them fails to compile here with a message that names the call and says it is not simulated,
// rather than "no member". Every other call the SDK has and authsim lacks is simply absent, which
// fails to compile too. (docs/app-code-on-linux.md)

private let notSimulated = "is not simulated by authsim (phone auth, Sign in with Apple, phone second factors); keep this call out of the code you test on Linux"

extension Auth {
    @available(*, unavailable, message: "Email and password sign-in is not simulated by authsim (phone auth, Sign in with Apple, phone second factors); keep this call out of the code you test on Linux")
    public func signIn(withEmail email: String, password: String) async throws -> AuthDataResult { fatalError(notSimulated) }

    @available(*, unavailable, message: "Email and password sign-in is not simulated by authsim (phone auth, Sign in with Apple, phone second factors); keep this call out of the code you test on Linux")
    public func signIn(withEmail email: String, password: String, completion: ((AuthDataResult?, (any Error)?) -> Void)?) { fatalError(notSimulated) }

    @available(*, unavailable, message: "Email link sign-in is not simulated by authsim (phone auth, Sign in with Apple, phone second factors); keep this call out of the code you test on Linux")
    public func signIn(withEmail email: String, link: String) async throws -> AuthDataResult { fatalError(notSimulated) }

    @available(*, unavailable, message: "Creating email and password users is not simulated by authsim (phone auth, Sign in with Apple, phone second factors); keep this call out of the code you test on Linux")
    public func createUser(withEmail email: String, password: String) async throws -> AuthDataResult { fatalError(notSimulated) }

    @available(*, unavailable, message: "Creating email and password users is not simulated by authsim (phone auth, Sign in with Apple, phone second factors); keep this call out of the code you test on Linux")
    public func createUser(withEmail email: String, password: String, completion: ((AuthDataResult?, (any Error)?) -> Void)?) { fatalError(notSimulated) }

    @available(*, unavailable, message: "Password reset email is not simulated by authsim (phone auth, Sign in with Apple, phone second factors); keep this call out of the code you test on Linux")
    public func sendPasswordReset(withEmail email: String) async throws { fatalError(notSimulated) }

    @available(*, unavailable, message: "Anonymous sign-in is not simulated by authsim (phone auth, Sign in with Apple, phone second factors); keep this call out of the code you test on Linux")
    public func signInAnonymously() async throws -> AuthDataResult { fatalError(notSimulated) }

    @available(*, unavailable, message: "Anonymous sign-in is not simulated by authsim (phone auth, Sign in with Apple, phone second factors); keep this call out of the code you test on Linux")
    public func signInAnonymously(completion: ((AuthDataResult?, (any Error)?) -> Void)?) { fatalError(notSimulated) }

    @available(*, unavailable, message: "Custom-token sign-in is not simulated by authsim on the app's side (the backend verifies custom tokens for the Admin SDK); keep this call out of the code you test on Linux")
    public func signIn(withCustomToken token: String) async throws -> AuthDataResult { fatalError(notSimulated) }




    @available(*, unavailable, message: "useAppLanguage() is not simulated by authsim; set Auth.auth().languageCode instead")
    public func useAppLanguage() { fatalError(notSimulated) }
}
