import Foundation
import FirebaseAuthCore
import Testing

/// `#expect(throws:)` for the auth core's public calls: they throw what the SDK's throw, an
/// `NSError` in `FIRAuthErrorDomain` (`AuthNSError`), which no Swift error type matches on Linux.
/// Checks that the error is one (what `catch let e as NSError` needs), its code when given, and
/// returns the `AuthError` behind it; records an issue when nothing or something else is thrown.
@discardableResult
func expectAuthError<T>(_ expected: AuthErrorCode? = nil, sourceLocation: SourceLocation = #_sourceLocation,
                        _ body: () async throws -> T) async -> AuthError? {
    do {
        _ = try await body()
        Issue.record("no error was thrown\(expected.map { ", \($0) expected" } ?? "")", sourceLocation: sourceLocation)
        return nil
    } catch {
        let nsError = error as NSError
        guard nsError.domain == AuthErrorDomain, let authError = AuthError(thrown: error) else {
            Issue.record("not the SDK's kind of error (an NSError in \(AuthErrorDomain)): \(type(of: error)) \(error)", sourceLocation: sourceLocation)
            return nil
        }
        #expect(nsError.code == authError.code.rawValue, sourceLocation: sourceLocation)
        if let expected { #expect(authError.code == expected, "\(authError.message)", sourceLocation: sourceLocation) }
        return authError
    }
}
