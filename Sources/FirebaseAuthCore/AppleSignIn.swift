import Utilities
import Crypto
import Foundation
import IdentityToolkitAPI

/// The nonce of Sign in with Apple, as Firebase's sample makes it: random characters from the
/// sample's charset (which lacks "W", as the sample's does), the SHA-256 hex of it sent to Apple,
/// the raw nonce sent to Firebase.
public enum AppleNonce {
    static let charset = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVXYZabcdefghijklmnopqrstuvwxyz-._")

    /// `length` characters from a cryptographically secure generator (getrandom(2)), without
    /// modulo bias.
    public static func random(length: Int = 32) -> String {
        precondition(length > 0)
        var generator = SystemRandomNumberGenerator()
        return String((0..<length).map { _ in charset[Int.random(in: 0..<charset.count, using: &generator)] })
    }

    /// Lowercase hex SHA-256, what goes into `ASAuthorizationAppleIDRequest.nonce`.
    public static func sha256(_ input: String) -> String {
        Hex.encode(SHA256.hash(data: Array(input.utf8)))
    }
}

/// An identity provider's credential: Apple's identity token with the raw nonce (and, on the first
/// sign-in only, the user's name), or a pending token from an earlier `credentialAlreadyInUse`.
public final class OAuthCredential: Sendable {
    public let providerID: String
    public let idToken: String?
    public let rawNonce: String?
    public let fullName: PersonNameComponents?
    let pendingToken: String?

    init(providerID: String, idToken: String?, rawNonce: String?, fullName: PersonNameComponents?, pendingToken: String? = nil) {
        self.providerID = providerID
        self.idToken = idToken
        self.rawNonce = rawNonce
        self.fullName = fullName
        self.pendingToken = pendingToken
    }

    /// The `postBody` of signInWithIdp.
    var postBody: String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        var fields = ["providerId=\(providerID)"]
        if let idToken { fields.insert("id_token=\(idToken.addingPercentEncoding(withAllowedCharacters: allowed) ?? idToken)", at: 0) }
        if let rawNonce { fields.append("nonce=\(rawNonce.addingPercentEncoding(withAllowedCharacters: allowed) ?? rawNonce)") }
        return fields.joined(separator: "&")
    }

    /// "Given Family", as the SDK formats `fullName` for the display name.
    var displayName: String? {
        guard let fullName else { return nil }
        let name = [fullName.givenName, fullName.familyName].compactMap { $0 }.joined(separator: " ")
        return name.isEmpty ? nil : name
    }
}

/// `OAuthProvider`'s credential factories.
public enum OAuthProvider {
    /// `OAuthProvider.appleCredential(withIDToken:rawNonce:fullName:)`.
    public static func appleCredential(withIDToken idToken: String, rawNonce: String?, fullName: PersonNameComponents?) -> OAuthCredential {
        OAuthCredential(providerID: "apple.com", idToken: idToken, rawNonce: rawNonce, fullName: fullName)
    }

    /// `OAuthProvider.credential(providerID:idToken:rawNonce:)` (reauthentication has no name).
    public static func credential(providerID: String, idToken: String, rawNonce: String?) -> OAuthCredential {
        OAuthCredential(providerID: providerID, idToken: idToken, rawNonce: rawNonce, fullName: nil)
    }

    /// `OAuthProvider.credential(withProviderID:idToken:rawNonce:)`, the older spelling.
    public static func credential(withProviderID providerID: String, idToken: String, rawNonce: String?) -> OAuthCredential {
        credential(providerID: providerID, idToken: idToken, rawNonce: rawNonce)
    }
}

extension Auth {
    /// Signs in with an identity provider's credential (Sign in with Apple). A new user gets the
    /// credential's `fullName` as display name, as the SDK sets it (Apple sends the name once).
    public func signIn(with credential: OAuthCredential) async throws(AuthError) -> AuthDataResult {
        let (user, isNew) = try await idpSignIn(credential, linkingTo: nil)
        state.withLock { $0.currentUser = user }
        return AuthDataResult(user: user, isNewUser: isNew, credential: credential)
    }

    /// `revokeToken(withAuthorizationCode:)`: revokes the signed-in user's Apple grant (Apple
    /// requires it before the account is deleted).
    public func revokeToken(withAuthorizationCode code: String) async throws(AuthError) {
        guard let user = currentUser else { throw AuthError(.userNotFound, "no user is signed in") }
        _ = try await backend.call(RevokeTokenRequest(providerId: "apple.com", tokenType: "CODE", token: code,
                                                      idToken: try await user.getIDToken()))
    }

    /// signInWithIdp: a session for the credential's user, or linking to `user`.
    func idpSignIn(_ credential: OAuthCredential, linkingTo user: User?) async throws(AuthError) -> (User, Bool) {
        guard credential.providerID == "apple.com" else {
            throw AuthError(.invalidCredential, "this auth core signs in with apple.com credentials, not \(credential.providerID)")
        }
        var request = VerifyAssertionRequest()
        if let pending = credential.pendingToken { request.pendingToken = pending } else { request.postBody = credential.postBody }
        if let user { request.idToken = try await user.getIDToken() }
        let response = try await backend.call(request)
        if let message = response.errorMessage {
            let updated = response.pendingToken.map {
                OAuthCredential(providerID: "apple.com", idToken: nil, rawNonce: nil, fullName: nil, pendingToken: $0)
            }
            let mapped = AuthError.fromServer(message)
            throw AuthError(mapped.code, "\(message): this Apple ID is linked to another account; sign in with error.updatedCredential",
                            serverMessage: message, updatedCredential: updated, email: response.email)
        }
        guard let uid = response.localId, let idToken = response.idToken else {
            throw AuthError(.appConfigurationError, "verifyAssertion answered without localId or idToken")
        }
        let isNew = response.isNewUser ?? false
        var displayName = response.displayName
        if isNew, displayName == nil, let name = credential.displayName {
            let updated = try await backend.call(SetAccountInfoRequest(idToken: idToken, displayName: name))
            displayName = updated.displayName.flatMap { $0.isEmpty ? nil : $0 } ?? name
        }
        if let user {
            user.update {
                $0.idToken = idToken
                $0.refreshToken = response.refreshToken
                if !$0.providerIDs.contains("apple.com") { $0.providerIDs.append("apple.com") }
                $0.email = $0.email ?? response.email
            }
            return (user, false)
        }
        let signedIn = User(auth: self, uid: uid, phoneNumber: nil, email: response.email, displayName: displayName,
                            idToken: idToken, refreshToken: response.refreshToken, providerIDs: ["apple.com"])
        return (signedIn, isNew)
    }
}

extension User {
    /// `reauthenticate(with:)`: a fresh sign-in with the provider; it must be this user
    /// (`userMismatch` 17024 otherwise). The user's tokens are renewed.
    @discardableResult
    public func reauthenticate(with credential: OAuthCredential) async throws(AuthError) -> AuthDataResult {
        let (fresh, _) = try await auth.idpSignIn(credential, linkingTo: nil)
        guard fresh.uid == uid else {
            throw AuthError(.userMismatch, "the credential is for user \(fresh.uid.prefix(8))…, not the signed-in user \(uid.prefix(8))…")
        }
        let token = try await fresh.getIDToken()
        update {
            $0.idToken = token
            $0.refreshToken = fresh.refreshToken
        }
        return AuthDataResult(user: self, isNewUser: false, credential: credential)
    }

    /// `link(with:)`: adds the Apple ID to this user. If another account holds it:
    /// `credentialAlreadyInUse` (17025) with `updatedCredential` to sign in to that account.
    @discardableResult
    public func link(with credential: OAuthCredential) async throws(AuthError) -> AuthDataResult {
        _ = try await auth.idpSignIn(credential, linkingTo: self)
        return AuthDataResult(user: self, isNewUser: false, credential: credential)
    }

    /// `delete()`: deletes the account; the user is signed out.
    public func delete() async throws(AuthError) {
        _ = try await auth.backend.call(DeleteAccountRequest(idToken: try await getIDToken()))
        auth.state.withLock { if $0.currentUser?.uid == uid { $0.currentUser = nil } }
    }
}
