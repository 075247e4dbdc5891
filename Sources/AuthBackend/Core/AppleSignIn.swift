import IdentityToolkitAPI
import Utilities
import Crypto
import Foundation

extension CoreCall {
    mutating func signInWithIdp(_ request: VerifyAssertionRequest) throws(IdentityToolkitError) -> SignInDecision<VerifyAssertionResponse> {
        let endpoint = BackendOperation.signInWithIdp
        try enter(tenant: request.tenantId, endpoint: endpoint)
        let (postBody, pendingToken, idToken) = (request.postBody, request.pendingToken, request.idToken)
        var sub: String
        var email: String?
        var emailVerified = true
        /// The name the SDK sends on the first authorization (`user={"name":{…}}` in the post body).
        var name: String?
        /// The identity token's claims as JSON, answered as `rawUserInfo` (the SDK's
        /// `AdditionalUserInfo.profile`), as the Auth Emulator answers for providers other than Google.
        var rawUserInfo: String?
        if let pendingToken, !pendingToken.isEmpty {
            guard let pending = state.pendingAppleTokens[pendingToken] else {
                throw reject(endpoint, IdentityToolkitError(.invalidPendingToken, "The pending token is unknown or was used."))
            }
            try enter(tenant: pending.tenant, endpoint: endpoint)
            commit(.applePendingUsed(token: pendingToken))
            (sub, email) = (pending.sub, pending.email)
        } else {
            let fields: [String: String]
            do { fields = try request.credentialFields() } catch { throw reject(endpoint, error) }
            guard let provider = fields["providerId"], !provider.isEmpty else {
                throw reject(endpoint, IdentityToolkitError(.missingOrInvalidProviderID, "Provider ID is missing in the request."))
            }
            // Other providers' tokens are the Auth Emulator's fakes (IdentityProviders.swift); Game Center is a device's.
            let providerID = ProviderID(rawValue: provider)
            guard providerID == .apple else {
                guard providerID != .gameCenter else {
                    throw reject(endpoint, IdentityToolkitError(.invalidProviderID, "Game Center sign-in needs a device's Game Center; it is not simulated."))
                }
                return try signInWithProvider(request, provider: providerID, fields: fields)
            }
            guard let token = fields["id_token"], !token.isEmpty else {
                throw reject(endpoint, IdentityToolkitError(.invalidIDPResponse, "The supplied auth credential is malformed or has expired."),
                             cause: .appleTokenMalformed)
            }
            let claims: AppleIdentityTokenClaims
            let payload: [UInt8]
            do { (claims, payload) = try AppleIDProvider.verifySignature(token, jwks: appleID.jwks) } catch { throw reject(endpoint, error) }
            guard claims.iss == AppleIDProvider.issuer else {
                throw reject(endpoint, IdentityToolkitError(.invalidIDPResponse, "Invalid ID token: iss is \(claims.iss ?? "missing"), not \(AppleIDProvider.issuer)"),
                             cause: .appleTokenIssuer)
            }
            let audiences = [configuration.bundleID] + configuration.appleServicesIDs
            guard let audience = claims.aud, audiences.contains(audience) else {
                throw reject(endpoint, IdentityToolkitError(.invalidIDPResponse, "Invalid ID token: aud \(claims.aud ?? "missing") is not a bundle ID or services ID configured for Sign in with Apple (\(audiences.joined(separator: ", ")))"),
                             cause: .appleTokenAudience)
            }
            guard let exp = claims.exp, Double(exp) > now.timeIntervalSince1970 else {
                throw reject(endpoint, IdentityToolkitError(.invalidIDPResponse, "The supplied auth credential is malformed or has expired."),
                             cause: .appleTokenExpired)
            }
            if let expected = claims.nonce {
                guard let raw = fields["nonce"], !raw.isEmpty else {
                    throw reject(endpoint, IdentityToolkitError(.missingOrInvalidNonce, "Nonce is missing in the request."))
                }
                guard ConstantTime.equals(BackendCore.digest(raw), expected) else {
                    throw reject(endpoint, IdentityToolkitError(.missingOrInvalidNonce, "The nonce in ID Token \"\(expected)\" does not match the SHA256 hash of the raw nonce \"\(raw)\" in the request."))
                }
            }
            let spent = BackendCore.digest(token)
            guard state.spentAppleTokens[spent] == nil else {
                throw reject(endpoint, IdentityToolkitError(.missingOrInvalidNonce, "Duplicate credential received. Please try again with a new credential."))
            }
            commit(.appleTokenSpent(digest: spent, at: now))
            guard let tokenSub = claims.sub else {
                throw reject(endpoint, IdentityToolkitError(.invalidIDPResponse, "Invalid ID token: no sub"), cause: .appleTokenMalformed)
            }
            sub = tokenSub
            email = claims.email
            emailVerified = claims.emailVerified != "false"
            name = fields["user"].flatMap(Self.appleUserName)
            rawUserInfo = String(decoding: payload, as: UTF8.self)
        }
        let now = now
        let holder = directory.idByAppleSub[sub].flatMap { directory.byID[$0] }
        if let idToken, !idToken.isEmpty {
            // Linking to the signed-in user.
            guard let uid = try standingUID(idToken, endpoint: endpoint), var user = directory.byID[uid] else {
                throw reject(endpoint, IdentityToolkitError(.invalidIDToken, "The user's credential is no longer valid. The user must sign in again."))
            }
            if let holder, holder.localId != uid {
                let pending = randomString(bytes: 32)
                commit(.applePending(token: pending, sub: sub, email: email, at: now))
                _ = reject(endpoint, IdentityToolkitError(.federatedUserIDAlreadyLinked, "This credential is already associated with a different user account."))
                return .answer(VerifyAssertionResponse(federatedId: sub, providerId: .apple, email: email, isNewUser: false,
                                                       errorMessage: IdentityToolkitError.Code.federatedUserIDAlreadyLinked.rawValue,
                                                       pendingToken: pending))
            }
            if let linked = user.appleSub, linked != sub {
                throw reject(endpoint, IdentityToolkitError(.providerAlreadyLinked, "User has already been linked to the given provider."))
            }
            user.appleSub = sub
            if user.email == nil {
                user.email = email
                user.emailVerified = emailVerified
            }
            commit(.user(user))
            let grant = try grantTokens(for: user, provider: .apple, endpoint: endpoint)
            emit(.appleSignIn(uid: uid, sub: sub, isNewUser: false, linked: true))
            return .tokens(grant) { tokens in
                VerifyAssertionResponse(federatedId: sub, providerId: .apple, localId: uid, email: user.email,
                                               displayName: user.displayName, idToken: tokens.idToken, refreshToken: tokens.refreshToken,
                                               expiresIn: tokens.expiresIn, isNewUser: false, rawUserInfo: rawUserInfo)
            }
        }
        // Reauthentication sends autoCreate: false: an Apple ID with no account is not signed up.
        if holder == nil, request.autoCreate == false {
            throw reject(endpoint, IdentityToolkitError(.userNotFound, "There is no user record for this Apple ID, and autoCreate is false."))
        }
        let user = holder ?? BackendUser(localId: newLocalID(hint: sub), createdAt: now, appleSub: sub, email: email,
                                         emailVerified: email == nil ? nil : emailVerified, displayName: name)
        let isNew = holder == nil
        if isNew {
            commit(.user(user))
        }
        // A user with a second factor gets a pending credential for it, not a session.
        if user.hasSecondFactor {
            let pending = try openMFAPending(for: user, provider: .apple, endpoint: endpoint)
            return .answer(VerifyAssertionResponse(federatedId: sub, providerId: .apple, localId: user.localId, email: user.email,
                                                   displayName: user.displayName, isNewUser: false, mfaPendingCredential: pending.credential,
                                                   mfaInfo: pending.hints))
        }
        let grant = try grantTokens(for: user, provider: .apple, endpoint: endpoint)
        emit(.appleSignIn(uid: user.localId, sub: sub, isNewUser: isNew, linked: false))
        return .tokens(grant) { tokens in
            VerifyAssertionResponse(federatedId: sub, providerId: .apple, localId: user.localId, email: user.email,
                                           displayName: user.displayName, idToken: tokens.idToken, refreshToken: tokens.refreshToken,
                                           expiresIn: tokens.expiresIn, isNewUser: isNew, rawUserInfo: rawUserInfo)
        }
    }

    /// ``IdentityToolkit/appleAuthorize(_:)``'s rules.
    mutating func appleAuthorize(_ request: AppleAuthorizeRequest) throws(IdentityToolkitError) -> AppleAuthorizeResponse {
        let scopes = (request.scope ?? "name email").split(separator: " ")
        let sub = appleID.subject(of: request.user)
        let first = !state.appleConsents.contains(BackendState.consentKey(sub, request.clientID))
        let authorization: AppleIDProvider.Authorization
        do {
            authorization = try appleID.authorize(
                clientID: request.clientID, appleUser: request.user, nonce: request.nonce, wantsEmail: scopes.contains("email"),
                wantsName: scopes.contains("name"), hideEmail: request.hideEmail ?? false, givenName: request.givenName,
                familyName: request.familyName, issuedAt: request.issuedAt.map { Date(timeIntervalSince1970: $0) }, firstConsent: first)
        } catch {
            throw IdentityToolkitError(.oauthServerError, "Apple's sheet could not sign the identity token: \(error)", status: 500)
        }
        if first { commit(.appleConsent(sub: sub, clientID: request.clientID, granted: true)) }
        return AppleAuthorizeResponse(identityToken: authorization.identityToken, authorizationCode: authorization.authorizationCode,
                                      user: authorization.user, email: authorization.email, givenName: authorization.givenName,
                                      familyName: authorization.familyName)
    }

    /// ``IdentityToolkit/revokeToken(_:)``'s rules.
    mutating func revokeToken(_ request: RevokeTokenRequest) throws(IdentityToolkitError) -> EmptyResponse {
        let endpoint = BackendOperation.revokeToken
        try enter(tenant: request.tenantId, endpoint: endpoint)
        // The SDK sends the enum's raw value as a string ("3"); REST clients its name ("CODE").
        guard request.providerId == .apple, [.sdkAuthorizationCode, .code].contains(request.tokenType) else {
            throw reject(endpoint, IdentityToolkitError(.invalidRequest, "providerId must be apple.com and tokenType CODE (3), not \(request.tokenType?.rawValue ?? "none")"))
        }
        let (code, idToken) = (request.token, request.idToken)
        guard let uid = try standingUID(idToken, endpoint: endpoint), directory.byID[uid] != nil else {
            throw reject(endpoint, IdentityToolkitError(.invalidIDToken, "The user's credential is no longer valid. The user must sign in again."))
        }
        guard let code, !code.isEmpty else { throw reject(endpoint, IdentityToolkitError(.invalidRequest, "token (the authorization code) is required")) }
        let sub: String
        do throws(IdentityToolkitError) {
            sub = try appleID.subject(ofCode: code, clientID: configuration.bundleID)
            // Used once, on whichever node: the fleet's record, as every single-use thing.
            let digest = BackendCore.digest(code)
            guard state.revokedAppleCodes[digest] == nil else { throw AppleIDProvider.invalidGrant }
            commit(.appleCodeRevoked(digest: digest, at: now))
        } catch { throw reject(endpoint, error) }
        // The grant ended: the next consent is a first one again (name and email), on every node.
        if state.appleConsents.contains(BackendState.consentKey(sub, configuration.bundleID)) {
            do throws(IdentityToolkitError) { commit(.appleConsent(sub: sub, clientID: configuration.bundleID, granted: false)) } catch {
                throw reject(endpoint, error)
            }
        }
        emit(.appleRevoked(uid: uid, sub: sub))
        return EmptyResponse()
    }

    /// The display name in the SDK's `user={"name":{"firstName":…,"lastName":…}}`: "First Last".
    static func appleUserName(_ json: String) -> String? {
        struct AppleUser: Decodable {
            struct Name: Decodable {
                let firstName: String?
                let lastName: String?
            }
            let name: Name?
        }
        guard let user = try? JSONDecoder().decode(AppleUser.self, from: Data(json.utf8)), let name = user.name else { return nil }
        let text = [name.firstName, name.lastName].compactMap { $0 }.joined(separator: " ")
        return text.isEmpty ? nil : text
    }

}

extension BackendCore {
    /// `id_token=…&providerId=apple.com&nonce=…` → fields (percent-decoded, `+` as space, first wins).
    static func formFields(_ body: String) -> [String: String] { WebText.formFields(body) }

}
