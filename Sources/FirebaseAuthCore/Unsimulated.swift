import Foundation

// FirebaseAuth 12.19 calls that apps often make and authsim does not simulate, declared with the
// SDK's signatures (FirebaseAuth/Sources/Swift/Auth/Auth.swift) and unavailable: code that calls
// them fails to compile here with a message that names the call and says it is not simulated,
// rather than "no member". Every other call the SDK has and authsim lacks is simply absent, which
// fails to compile too. (docs/app-code-on-linux.md)

private let notSimulated = "is not simulated by authsim; keep this call out of the code you test on Linux"

// Providers and factors FirebaseAuth 12.19 has and authsim does not simulate: the types exist, so
// that `GoogleAuthProvider.credential(…)` fails to compile saying
// why, rather than "cannot find in scope".


@available(*, unavailable, message: "Google sign-in: authsim simulates phone, Sign in with Apple, email and password, anonymous and custom-token sign-in; keep this code out of the package you test on Linux")
public enum GoogleAuthProvider {
    public static let id = "google.com"
    public static func credential(withIDToken idToken: String, accessToken: String) -> AuthCredential { fatalError(notSimulated) }
}

@available(*, unavailable, message: "Facebook sign-in: authsim simulates phone, Sign in with Apple, email and password, anonymous and custom-token sign-in; keep this code out of the package you test on Linux")
public enum FacebookAuthProvider {
    public static let id = "facebook.com"
    public static func credential(withAccessToken accessToken: String) -> AuthCredential { fatalError(notSimulated) }
}

@available(*, unavailable, message: "GitHub sign-in: authsim simulates phone, Sign in with Apple, email and password, anonymous and custom-token sign-in; keep this code out of the package you test on Linux")
public enum GitHubAuthProvider {
    public static let id = "github.com"
    public static func credential(withToken token: String) -> AuthCredential { fatalError(notSimulated) }
}

@available(*, unavailable, message: "Twitter sign-in: authsim simulates phone, Sign in with Apple, email and password, anonymous and custom-token sign-in; keep this code out of the package you test on Linux")
public enum TwitterAuthProvider {
    public static let id = "twitter.com"
    public static func credential(withToken token: String, secret: String) -> AuthCredential { fatalError(notSimulated) }
}

@available(*, unavailable, message: "Game Center sign-in: authsim simulates phone, Sign in with Apple, email and password, anonymous and custom-token sign-in; keep this code out of the package you test on Linux")
public enum GameCenterAuthProvider {
    public static let id = "gc.apple.com"
    public static func getCredential() async throws -> AuthCredential { fatalError(notSimulated) }
    public static func getCredential(completion: @escaping (AuthCredential?, (any Error)?) -> Void) { fatalError(notSimulated) }
}


