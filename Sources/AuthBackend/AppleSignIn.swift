import Crypto
import Foundation

/// What signInWithIdp answers: a session, or (linking a credential another account holds) the
/// `FEDERATED_USER_ID_ALREADY_LINKED` answer with a pending token for a fresh credential.
public struct IdpResult: Sendable, Hashable {
    public var idToken: String?
    public var refreshToken: String?
    public var localId: String?
    public var isNewUser = false
    public var email: String?
    public var displayName: String?
    public var federatedId: String
    public var errorMessage: String?
    public var pendingToken: String?
}

extension IdentityToolkit {
    /// `signInWithIdp` (`verifyAssertion`) for `apple.com`: verifies the identity token against
    /// Apple's JWKS (`iss`, `aud`, `exp`, the nonce against the raw nonce, each token once), then signs
    /// the Apple user in (creating them), or links the credential to the user of `idToken`.
    public func signInWithIdp(postBody: String?, pendingToken: String?, idToken: String?, displayName: String? = nil) throws(BackendError) -> IdpResult {
        let endpoint = "signInWithIdp"
        var sub: String
        var email: String?
        if let pendingToken, !pendingToken.isEmpty {
            guard let pending = state.pendingAppleTokens[pendingToken] else {
                throw reject(endpoint, BackendError("INVALID_PENDING_TOKEN", "The pending token is unknown or was used."))
            }
            do { try commit(.applePendingUsed(token: pendingToken)) } catch { throw reject(endpoint, error) }
            (sub, email) = (pending.sub, pending.email)
        } else {
            let fields = Self.formFields(postBody ?? "")
            guard let provider = fields["providerId"], !provider.isEmpty else {
                throw reject(endpoint, BackendError("MISSING_OR_INVALID_PROVIDER_ID", "Provider ID is missing in the request."))
            }
            guard provider == "apple.com" else {
                throw reject(endpoint, BackendError("INVALID_PROVIDER_ID", "This backend signs in with apple.com only, not \(provider)."))
            }
            guard let token = fields["id_token"], !token.isEmpty else {
                throw reject(endpoint, BackendError("INVALID_IDP_RESPONSE", "The supplied auth credential is malformed or has expired."))
            }
            let claims: [String: Any]
            do { claims = try AppleIDProvider.verifySignature(token, jwks: appleID.jwks) } catch { throw reject(endpoint, error) }
            guard claims["iss"] as? String == AppleIDProvider.issuer else {
                throw reject(endpoint, BackendError("INVALID_IDP_RESPONSE", "Invalid ID token: iss is \(claims["iss"] ?? "missing"), not \(AppleIDProvider.issuer)"))
            }
            let audiences = [configuration.bundleID] + configuration.appleServicesIDs
            guard let audience = claims["aud"] as? String, audiences.contains(audience) else {
                throw reject(endpoint, BackendError("INVALID_IDP_RESPONSE", "Invalid ID token: aud \(claims["aud"] ?? "missing") is not a bundle ID or services ID configured for Sign in with Apple (\(audiences.joined(separator: ", ")))"))
            }
            guard let exp = claims["exp"] as? Int, Double(exp) > clock.now.timeIntervalSince1970 else {
                throw reject(endpoint, BackendError("INVALID_IDP_RESPONSE", "The supplied auth credential is malformed or has expired."))
            }
            if let expected = claims["nonce"] as? String {
                guard let raw = fields["nonce"], !raw.isEmpty else {
                    throw reject(endpoint, BackendError("MISSING_OR_INVALID_NONCE", "Nonce is missing in the request."))
                }
                guard constantTimeEquals(Self.digest(raw), expected) else {
                    throw reject(endpoint, BackendError("MISSING_OR_INVALID_NONCE", "The nonce in ID Token \"\(expected)\" does not match the SHA256 hash of the raw nonce \"\(raw)\" in the request."))
                }
            }
            let spent = Self.digest(token)
            guard state.spentAppleTokens[spent] == nil else {
                throw reject(endpoint, BackendError("MISSING_OR_INVALID_NONCE", "Duplicate credential received. Please try again with a new credential."))
            }
            do { try commit(.appleTokenSpent(digest: spent, at: clock.now)) } catch { throw reject(endpoint, error) }
            guard let tokenSub = claims["sub"] as? String else {
                throw reject(endpoint, BackendError("INVALID_IDP_RESPONSE", "Invalid ID token: no sub"))
            }
            sub = tokenSub
            email = claims["email"] as? String
        }
        let now = clock.now
        let holder = state.userByAppleSub[sub].flatMap { state.users[$0] }
        if let idToken, !idToken.isEmpty {
            // Linking to the signed-in user.
            guard let uid = tokenSigner.verifiedUID(idToken, now: now), var user = state.users[uid] else {
                throw reject(endpoint, BackendError("INVALID_ID_TOKEN", "The user's credential is no longer valid. The user must sign in again."))
            }
            if let holder, holder.localId != uid {
                let pending = Self.randomString(bytes: 32)
                do { try commit(.applePending(token: pending, sub: sub, email: email, at: now)) } catch { throw reject(endpoint, error) }
                _ = reject(endpoint, BackendError("FEDERATED_USER_ID_ALREADY_LINKED", "This credential is already associated with a different user account."))
                return IdpResult(email: email, federatedId: sub, errorMessage: "FEDERATED_USER_ID_ALREADY_LINKED", pendingToken: pending)
            }
            if let linked = user.appleSub, linked != sub {
                throw reject(endpoint, BackendError("PROVIDER_ALREADY_LINKED", "User has already been linked to the given provider."))
            }
            user.appleSub = sub
            if user.email == nil { user.email = email }
            do { try commit(.user(user)) } catch { throw reject(endpoint, error) }
            observer?(.appleSignIn(uid: uid, sub: sub, isNewUser: false, linked: true))
            return IdpResult(idToken: tokenSigner.token(for: user, provider: "apple.com", now: now), refreshToken: Self.randomString(bytes: 48),
                             localId: uid, email: user.email, displayName: user.displayName, federatedId: sub)
        }
        var user = holder ?? BackendUser(localId: Self.randomString(bytes: 21), createdAt: now, appleSub: sub, email: email)
        let isNew = holder == nil
        if isNew {
            // Apple gives the name only once, to the app; the app passes it with its first sign-in.
            user.displayName = displayName
        }
        do { try commit(.user(user)) } catch { throw reject(endpoint, error) }
        observer?(.appleSignIn(uid: user.localId, sub: sub, isNewUser: isNew, linked: false))
        return IdpResult(idToken: tokenSigner.token(for: user, provider: "apple.com", now: now), refreshToken: Self.randomString(bytes: 48),
                         localId: user.localId, isNewUser: isNew, email: user.email, displayName: user.displayName, federatedId: sub)
    }

    /// `accounts:revokeToken` (`providerId` apple.com, `tokenType` CODE): revokes the user's Apple
    /// grant with Apple, as the SDK's `revokeToken(withAuthorizationCode:)` asks before deleting.
    public func revokeAppleToken(code: String?, idToken: String?) throws(BackendError) {
        let endpoint = "revokeToken"
        guard let idToken, let uid = tokenSigner.verifiedUID(idToken, now: clock.now), state.users[uid] != nil else {
            throw reject(endpoint, BackendError("INVALID_ID_TOKEN", "The user's credential is no longer valid. The user must sign in again."))
        }
        guard let code, !code.isEmpty else { throw reject(endpoint, BackendError("INVALID_REQUEST", "token (the authorization code) is required")) }
        let sub: String
        do { sub = try appleID.revoke(code: code, clientID: configuration.bundleID) } catch { throw reject(endpoint, error) }
        observer?(.appleRevoked(uid: uid, sub: sub))
    }

    /// `accounts:delete` (`deleteAccount`).
    public func deleteAccount(idToken: String?) throws(BackendError) {
        guard let idToken, let uid = tokenSigner.verifiedUID(idToken, now: clock.now), state.users[uid] != nil else {
            throw reject("deleteAccount", BackendError("USER_NOT_FOUND"))
        }
        do { try commit(.userDeleted(localId: uid)) } catch { throw reject("deleteAccount", error) }
        observer?(.accountDeleted(uid: uid))
    }

    /// `accounts:update` (`setAccountInfo`): the display name.
    public func updateProfile(idToken: String?, displayName: String?) throws(BackendError) -> BackendUser {
        guard let idToken, let uid = tokenSigner.verifiedUID(idToken, now: clock.now), var user = state.users[uid] else {
            throw reject("setAccountInfo", BackendError("INVALID_ID_TOKEN", "The user's credential is no longer valid. The user must sign in again."))
        }
        if let displayName { user.displayName = displayName }
        do { try commit(.user(user)) } catch { throw reject("setAccountInfo", error) }
        return user
    }

    /// `id_token=…&providerId=apple.com&nonce=…` → fields (percent-decoded, `+` as space, first wins).
    static func formFields(_ body: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
            if let key = parts.first, fields[key] == nil { fields[key] = parts.count > 1 ? parts[1] : "" }
        }
        return fields
    }
}
