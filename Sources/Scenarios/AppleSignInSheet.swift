import AuthBackend
import FirebaseAuthCore
import Foundation
import HTTPTransport
import IdentityToolkitAPI

/// The device's Sign in with Apple sheet (`ASAuthorizationController`), against the backend's
/// simulated Apple ID provider: a user consents, and the app gets what
/// `ASAuthorizationAppleIDCredential` holds.
package struct AppleSignInSheet: Sendable {
    /// The backend, `http://host:port`.
    package let backend: String
    /// The device's network.
    package let transport: any HTTPTransport

    package init(backend: String, transport: any HTTPTransport) {
        self.backend = backend
        self.transport = transport
    }

    /// What the sheet returns.
    package struct Credential: Sendable {
        package let identityToken: String
        package let authorizationCode: String
        package let user: String
        /// Only the first time this Apple ID authorizes the app.
        package let email: String?
        package let fullName: PersonNameComponents?
    }

    package struct SheetError: Error, CustomStringConvertible {
        package let description: String
    }

    /// `appleUser` (a name for a simulated Apple ID) signs in to `clientID` with the request's
    /// `nonce` (the SHA-256 hex). `issuedAt` backdates the token (an expired one, for tests).
    package func authorize(clientID: String, appleUser: String, nonce: String?, scopes: [String] = ["name", "email"], hideEmail: Bool = false,
                          givenName: String? = "Ada", familyName: String? = "Lovelace", issuedAt: Date? = nil) async throws -> Credential {
        guard let url = URL(string: "\(backend)/appleid/auth/authorize") else { throw SheetError(description: "bad backend \(backend)") }
        let request = AppleAuthorizeRequest(clientID: clientID, user: appleUser, scope: scopes.joined(separator: " "), nonce: nonce,
                                            hideEmail: hideEmail, givenName: givenName, familyName: familyName,
                                            issuedAt: issuedAt?.timeIntervalSince1970)
        let answer = try await transport.send(TransportRequest(method: "POST", url: url, headers: [("Content-Type", "application/json")],
                                                               body: try IdentityToolkitJSON.encode(request)))
        guard answer.status == 200, let granted = try? IdentityToolkitJSON.decode(AppleAuthorizeResponse.self, from: answer.body) else {
            throw SheetError(description: "the Apple ID provider answered \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
        }
        var name: PersonNameComponents?
        if granted.givenName != nil || granted.familyName != nil {
            var components = PersonNameComponents()
            components.givenName = granted.givenName
            components.familyName = granted.familyName
            name = components
        }
        return Credential(identityToken: granted.identityToken, authorizationCode: granted.authorizationCode, user: granted.user,
                          email: granted.email, fullName: name)
    }
}
extension PhoneAuthWorld {
    /// The Sign in with Apple sheet of this world's devices.
    package var appleSheet: AppleSignInSheet { AppleSignInSheet(backend: backendURL, transport: transport) }
}
