import Foundation
import IdentityToolkitAPI
import Utilities

/// Tokens a sign-in's change granted: the refresh token is recorded; the ID token is signed after
/// the change, from this.
struct TokenGrant {
    let user: BackendUser
    let provider: ProviderID
    let secondFactor: String?
    let refreshToken: String
    /// The sign-in: the ID token's `auth_time` and `iat`.
    let issuedAt: Date
    let claims: [String: JSONValue]
}

/// A granted sign-in's tokens, signed.
struct SignedTokens {
    let idToken: String
    let refreshToken: String
    let expiresIn: String
}

/// What a sign-in's change decided: an answer (an error's answer, a pending credential, a
/// temporary proof), or tokens to sign and the answer they go in.
enum SignInDecision<Answer> {
    case answer(Answer)
    case tokens(TokenGrant, (SignedTokens) -> Answer)
}
