import Foundation

// FirebaseAuth 12.19 calls that apps often make and authsim does not simulate, declared with the
// SDK's signatures (FirebaseAuth/Sources/Swift/Auth/Auth.swift) and unavailable: code that calls
// them fails to compile here with a message that names the call and says it is not simulated,
// rather than "no member". Every other call the SDK has and authsim lacks is simply absent, which
// fails to compile too. (docs/app-code-on-linux.md)

private let notSimulated = "is not simulated by authsim; keep this call out of the code you test on Linux"

// Game Center, which needs a device's Game Center: the type exists, so that
// `GameCenterAuthProvider.getCredential()` fails to compile saying why, rather than "cannot find
// in scope".

@available(*, unavailable, message: "Game Center sign-in needs a device's Game Center, which authsim does not simulate; keep this code out of the package you test on Linux")
public enum GameCenterAuthProvider {
    public static let id = "gc.apple.com"
    public static func getCredential() async throws -> AuthCredential { fatalError(notSimulated) }
    public static func getCredential(completion: @escaping (AuthCredential?, (any Error)?) -> Void) { fatalError(notSimulated) }
}


