import Foundation
import IdentityToolkitAPI
import Utilities

// Identity providers other than Apple (google.com, facebook.com, github.com, twitter.com,
// microsoft.com, yahoo.com, oidc.*, saml.*), as the Firebase Auth Emulator fakes them
// (firebase-tools src/emulator/auth/operations.ts signInWithIdp, parseClaims,
// fakeFetchUserInfoFromIdp, handleLinkIdp, handleIdpSigninEmailRequired): the credential's
// `id_token` (or, but for Google, `access_token`) is the provider's claims, as strict JSON or an
// unsigned JWT, with `sub` the provider's user ID. Apple's tokens are verified for real
// (AppleSignIn.swift); these are not, as in the emulator: a test hands them over.

/// What a fake provider token says of its user.
struct ProviderProfile {
    let providerID: ProviderID
    let rawId: String
    let email: String?
    let emailVerified: Bool
    let displayName: String?
    let photoUrl: String?
    let screenName: String?
    /// The answer's `rawUserInfo` (the SDK's `AdditionalUserInfo.profile`).
    let rawUserInfo: String
    let federatedId: String

    /// The provider's claims from a credential's form fields; the emulator's errors otherwise.
    static func read(_ fields: [String: String], provider: ProviderID) throws(IdentityToolkitError) -> ProviderProfile {
        let idToken = fields["id_token"].flatMap { $0.isEmpty ? nil : $0 }
        let accessToken = fields["access_token"].flatMap { $0.isEmpty ? nil : $0 }
        let fromID = try claims(idToken)
        let fromAccess = try claims(accessToken)
        guard let claims = fromID ?? fromAccess else {
            if let idToken {
                throw IdentityToolkitError(.invalidIDPResponse, "Unable to parse id_token: \(idToken.prefix(40)) ((Auth Emulator only accepts strict JSON or JWTs as fake id_tokens.))")
            }
            if accessToken != nil {
                throw IdentityToolkitError(.invalidIDPResponse, provider == .google
                    ? "google.com signs in with an id_token here (as in the Auth Emulator), not an access_token alone"
                    : "\(provider)'s access_token must be its claims as JSON here (as in the Auth Emulator): {\"sub\":…}")
            }
            throw IdentityToolkitError(.invalidIDPResponse, "the credential carries no id_token or access_token")
        }
        guard case .string(let sub)? = claims["sub"], !sub.isEmpty else {
            throw IdentityToolkitError(.invalidIDPResponse, "Invalid Idp Response: id_token missing required fields. ((Missing \"sub\" field. This field is required and must be a unique identifier.))")
        }
        func text(_ name: String) -> String? { if case .string(let value)? = claims[name] { value } else { nil } }
        let email = text("email")?.lowercased()
        let verified = if case .bool(true)? = claims["email_verified"] { true } else { false }
        var rawUserInfo = String(decoding: (try? IdentityToolkitJSON.encode(claims)) ?? [], as: UTF8.self)
        var federatedId = sub
        if provider == .google {
            federatedId = "https://accounts.google.com/\(sub)"
            var profile: [String: JSONValue] = ["id": .string(sub), "verified_email": .bool(verified), "locale": .string("en"),
                                                "granted_scopes": .string("openid https://www.googleapis.com/auth/userinfo.profile"
                                                    + (email == nil ? "" : " https://www.googleapis.com/auth/userinfo.email"))]
            for (key, value) in [("name", text("name")), ("given_name", text("given_name")), ("family_name", text("family_name")),
                                 ("email", email), ("picture", text("picture"))] {
                if let value { profile[key] = .string(value) }
            }
            rawUserInfo = String(decoding: (try? IdentityToolkitJSON.encode(profile)) ?? [], as: UTF8.self)
        }
        return ProviderProfile(providerID: provider, rawId: sub, email: email, emailVerified: verified, displayName: text("name"),
                               photoUrl: text("picture"), screenName: text("screen_name"), rawUserInfo: rawUserInfo, federatedId: federatedId)
    }

    /// Strict JSON, or a JWT's payload (its signature not checked, as the emulator's).
    private static func claims(_ token: String?) throws(IdentityToolkitError) -> [String: JSONValue]? {
        guard let token else { return nil }
        if token.hasPrefix("{") {
            guard let object = try? JSONDecoder().decode([String: JSONValue].self, from: Data(token.utf8)) else {
                throw IdentityToolkitError(.invalidIDPResponse, "Unable to parse id_token: \(token.prefix(40)) ((Auth Emulator failed to parse fake id_token as strict JSON.))")
            }
            return object
        }
        guard let jws = CompactJWS(token), let payload = Base64URL.decode(jws.payload) else { return nil }
        return try? JSONDecoder().decode([String: JSONValue].self, from: Data(payload))
    }

    /// The provider as the user's record lists it.
    var linked: ProviderUserInfo {
        ProviderUserInfo(providerId: providerID, rawId: rawId, federatedId: rawId, email: email, displayName: displayName, photoUrl: photoUrl)
    }
}

extension CoreCall {
    /// signInWithIdp for a provider other than Apple: sign in the user holding the provider's ID;
    /// else, with the signed-in user's ID token, link it (FEDERATED_USER_ID_ALREADY_LINKED when
    /// another account holds it, EMAIL_EXISTS when another has its email); else the account with
    /// its email, if the provider verified that email (the provider is linked to it), or
    /// `needConfirmation` (the SDK's accountExistsWithDifferentCredential, 17007) if not; else a
    /// new user.
    mutating func signInWithProvider(_ request: VerifyAssertionRequest, provider: ProviderID,
                                     fields: [String: String]) throws(IdentityToolkitError) -> SignInDecision<VerifyAssertionResponse> {
        let endpoint = BackendOperation.signInWithIdp
        let profile: ProviderProfile
        do { profile = try ProviderProfile.read(fields, provider: provider) } catch { throw reject(endpoint, error) }
        var answer = VerifyAssertionResponse(federatedId: profile.federatedId, providerId: provider, email: profile.email,
                                             displayName: profile.displayName, rawUserInfo: profile.rawUserInfo)
        answer.emailVerified = profile.emailVerified
        answer.photoUrl = profile.photoUrl
        answer.screenName = profile.screenName
        answer.oauthIdToken = fields["id_token"]
        answer.oauthAccessToken = fields["access_token"] ?? "FirebaseAuthEmulatorFakeAccessToken_\(provider)"
        answer.oauthTokenSecret = fields["oauth_token_secret"]
        let holder = directory.user(provider: provider, rawId: profile.rawId)
        var user: BackendUser
        var isNew = false
        if let idToken = request.idToken, !idToken.isEmpty {
            guard let uid = try standingUID(idToken, endpoint: endpoint), let signedIn = directory.byID[uid] else {
                throw reject(endpoint, IdentityToolkitError(.invalidIDToken, "The user's credential is no longer valid. The user must sign in again."))
            }
            // With returnIdpCredential (the SDK always sends it) the refusal is a 200 answer with
            // errorMessage and the provider's tokens, from which the SDK makes the credential
            // that signs in to the other account (the emulator's signInWithIdp catch).
            var refusal: IdentityToolkitError.Code?
            if let holder, holder.localId != uid { refusal = .federatedUserIDAlreadyLinked }
            if refusal == nil, let email = profile.email, let other = directory.user(email: email), other.localId != uid { refusal = .emailExists }
            if let refusal {
                let error = reject(endpoint, IdentityToolkitError(refusal))
                guard request.returnIdpCredential == true else { throw error }
                answer.errorMessage = refusal.rawValue
                return .answer(answer)
            }
            user = signedIn
            if user.email == nil, let email = profile.email {
                user.email = email
                user.emailVerified = profile.emailVerified
            } else if profile.emailVerified, user.email == profile.email {
                user.emailVerified = true
            }
        } else if let holder {
            user = holder
        } else if let email = profile.email, let owner = directory.user(email: email) {
            guard profile.emailVerified else {
                answer.needConfirmation = true
                answer.localId = owner.localId
                answer.verifiedProvider = Self.userInfo(owner).providerUserInfo?.map(\.providerId).filter { $0 != .password && $0 != .phone }.map(\.rawValue)
                _ = reject(endpoint, IdentityToolkitError(.emailExists, "an account has \(email) and \(provider) did not verify it: needConfirmation"))
                return .answer(answer)
            }
            user = owner
            if owner.emailVerified == false {
                // The email was not the account's to prove: what else signed it in goes (the emulator's rule).
                user.passwordHash = nil
                user.salt = nil
                user.phoneNumber = nil
                user.otherProviders = nil
                user.validSince = Int64(now.timeIntervalSince1970)
            }
            user.displayName = profile.displayName
            user.photoUrl = profile.photoUrl
            user.emailVerified = true
        } else {
            if request.autoCreate == false {
                throw reject(endpoint, IdentityToolkitError(.userNotFound, "There is no user record for this \(provider) account, and autoCreate is false."))
            }
            user = BackendUser(localId: newLocalID(hint: "\(provider)|\(profile.rawId)"), createdAt: now, email: profile.email,
                               emailVerified: profile.email == nil ? nil : profile.emailVerified, displayName: profile.displayName)
            user.photoUrl = profile.photoUrl
            isNew = true
        }
        var providers = (user.otherProviders ?? []).filter { $0.providerId != provider }
        providers.append(profile.linked)
        user.otherProviders = providers
        // A returning user whose provider profile is as it was changes nothing: no record.
        if isNew || directory.byID[user.localId] != user { commit(.user(user)) }
        answer.localId = user.localId
        answer.isNewUser = isNew
        if user.hasSecondFactor, request.idToken == nil {
            let pending = try openMFAPending(for: user, provider: provider, endpoint: endpoint)
            answer.mfaPendingCredential = pending.credential
            answer.mfaInfo = pending.hints
            return .answer(answer)
        }
        let grant = try grantTokens(for: user, provider: provider, endpoint: endpoint)
        emit(.accountSignIn(uid: user.localId, provider: SignInMethod(provider), email: user.email, isNewUser: isNew))
        return .tokens(grant) { tokens in
            var signedIn = answer
            signedIn.idToken = tokens.idToken
            signedIn.refreshToken = tokens.refreshToken
            signedIn.expiresIn = tokens.expiresIn
            return signedIn
        }
    }
}
