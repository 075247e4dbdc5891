import FirebaseAuth
import FirebaseCore
import Foundation
import Testing

/// `AuthErrorCode` as FirebaseAuth 12.19 declares it (`Utilities/AuthErrors.swift`: `@objc public
/// enum AuthErrorCode: Int, Error`, with `code` returning itself since firebase-ios-sdk#13430), used
/// the way the SDK's API test uses it (`FirebaseAuth/Tests/Unit/SwiftAPI.swift`, `regression13430`),
/// on the errors a call really returns. Those are `NSError`s in `FIRAuthErrorDomain`
/// (`AuthErrorUtils.error(code:…)`); an `@objc` enum's own errors bridge in the domain
/// `FirebaseAuth.AuthErrorCode` (Swift's derived `_BridgedNSError`), so on a device the cast is nil.
///
/// Inside ``GuideCode``, whose tests take turns: one of these installs the process's default app
/// (`withGuideWorld`), and run beside another guide test it replaced that test's app, whose next
/// call then found its process ended.
extension GuideCode {
    @Suite("AuthErrorCode: an Error with a code, as 12.19's; a call's errors are NSErrors it does not match")
    struct AuthErrorCodeTests {
        /// The shape of the SDK's `regression13430(error:)`: 1 when one of its branches takes the
        /// error, 2 when none does.
        static func regression13430(error: Error) -> Int {
            if let firebaseError = error as? AuthErrorCode, firebaseError == .networkError {
                return 1
            }
            if let firebaseError = error as? AuthErrorCode, firebaseError.code == .invalidPhoneNumber {
                switch firebaseError.localizedDescription {
                case "TOO_SHORT": return 1
                default: return 1
                }
            }
            return 2
        }

        @Test("a call's error: an NSError in FIRAuthErrorDomain; `as? AuthErrorCode` is nil and `catch let e as AuthErrorCode` does not catch it, as on a device")
        func callErrorsAreNSErrors() async throws {
            try await withGuideWorld { _ in
                do {
                    _ = try await PhoneAuthProvider.provider().verifyPhoneNumber("+1", uiDelegate: nil)
                    Issue.record("a one-digit number was accepted")
                } catch let code as AuthErrorCode {
                    Issue.record("caught as AuthErrorCode \(code): the SDK's errors are NSErrors of another domain")
                } catch {
                    let nsError = error as NSError
                    #expect(nsError.domain == AuthErrorDomain)
                    // What the app reads instead: the code from the NSError, the server's detail as the description.
                    #expect(AuthErrorCode(rawValue: nsError.code) == .invalidPhoneNumber)
                    #expect(nsError.localizedDescription == "TOO_SHORT")
                    #expect((error as? AuthErrorCode) == nil)
                    #expect(Self.regression13430(error: error) == 2)
                }
            }
        }

        @Test("an AuthErrorCode an app throws itself is an Error whose code is itself: the cast and the catch take it")
        func thrownCodeIsAnError() {
            #expect(Self.regression13430(error: AuthErrorCode.networkError) == 1)
            #expect(Self.regression13430(error: AuthErrorCode.invalidPhoneNumber) == 1)
            #expect(Self.regression13430(error: AuthErrorCode.userNotFound) == 2)
            #expect(AuthErrorCode.wrongPassword.code == .wrongPassword)
            do {
                throw AuthErrorCode.tooManyRequests
            } catch let error as AuthErrorCode {
                #expect(error.code.rawValue == 17010)
            } catch {
                Issue.record("not caught as AuthErrorCode: \(error)")
            }
        }
    }
}
