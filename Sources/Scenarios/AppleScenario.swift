import AuthBackend
import DeviceOS
import FirebaseAuthCore
import FirebaseCore
import Foundation

/// Sign in with Apple flows of scenario files, through the device's Apple sheet, the auth core and
/// the backend.
enum AppleScenario {
    static func run(_ spec: ScenarioSpec, apple: ScenarioSpec.AppleSpec, world: PhoneAuthWorld, timeline: Timeline) async -> ScenarioOutcome {
        let bundleID = spec.app.bundleID
        let options = world.options(for: spec.app)
        func newApp() -> Auth {
            world.auth(options: options, host: AppHost(AppHost.Configuration(bundleID: bundleID, urlSchemes: [options.encodedAppIDScheme]), transport: world.transport))
        }
        func sheet(_ who: String, rawSent: String?? = nil, clientID: String? = nil, issuedAt: Date? = nil,
                   use: String = "Auth.auth().signIn(with:") async throws -> (OAuthCredential, AppleSignInSheet.Credential) {
            try await appleCredential(who, bundleID: bundleID, hideEmail: apple.hideEmail, world: world, timeline: timeline,
                                      rawSent: rawSent, clientID: clientID, issuedAt: issuedAt, use: use)
        }
        do {
            let auth = newApp()
            switch apple.flow {
            case .signIn, .wrongNonce, .missingNonce, .expiredToken, .otherAudience:
                let rawSent: String?? = apple.flow == .wrongNonce ? .some("a-nonce-from-another-request") : apple.flow == .missingNonce ? .some(nil) : nil
                let (credential, _) = try await sheet(apple.appleUser, rawSent: rawSent,
                                                      clientID: apple.flow == .otherAudience ? "com.example.another-app" : nil,
                                                      issuedAt: apple.flow == .expiredToken ? Date().addingTimeInterval(-AppleIDProvider.tokenLifetime - 60) : nil)
                let result = try await auth.signIn(with: credential)
                timeline.record(.app, "signed in with Apple: uid \(result.user.uid.prefix(8))…, \(result.user.displayName ?? "no name"), \(result.user.email ?? "no email")\(result.isNewUser ? " (new user)" : "")",
                                .signedIn(uid: result.user.uid, path: .apple))
                return .signedInWithApple
            case .replayedToken:
                let (credential, _) = try await sheet(apple.appleUser)
                _ = try await auth.signIn(with: credential)
                try auth.signOut()
                timeline.record(.app, to: .backend, "signs in again with the same Apple credential (the same identity token)",
                                .appleCredentialReplayed)
                _ = try await auth.signIn(with: credential)
                return .signedInWithApple
            case .reauthenticate, .reauthenticateOtherUser:
                let user = try await auth.signIn(with: sheet(apple.appleUser).0).user
                timeline.record(.app, "before deleting the account, the app asks for a recent sign-in: user.reauthenticate(with:)")
                let other = apple.flow == .reauthenticateOtherUser ? "\(apple.appleUser)-partner" : apple.appleUser
                try await user.reauthenticate(with: sheet(other, use: "user.reauthenticate(with:").0)
                timeline.record(.app, "reauthenticated uid \(user.uid.prefix(8))…", .signedIn(uid: user.uid, path: .apple))
                return .reauthenticated
            case .linkToPhoneUser, .linkTakenAppleID:
                let number = spec.backend.testPhoneNumbers.first?.key ?? "+16505553434"
                auth.settings?.isAppVerificationDisabledForTesting = true
                let provider = PhoneAuthProvider.provider(auth: auth)
                timeline.record(.app, to: .backend, "signs in by phone first (test number \(number))")
                let id = try await provider.verifyPhoneNumber(number, uiDelegate: nil)
                let phoneUser = try await auth.signIn(with: provider.credential(withVerificationID: id, verificationCode: spec.backend.testPhoneNumbers[number] ?? "")).user
                if apple.flow == .linkTakenAppleID {
                    timeline.record(.authsim, "the same Apple ID already has an account of its own")
                    _ = try await newApp().signIn(with: sheet(apple.appleUser).0)
                }
                do {
                    try await phoneUser.link(with: sheet(apple.appleUser, use: "phoneUser.link(with:").0)
                } catch let thrown where AuthError(thrown: thrown)?.code == .credentialAlreadyInUse {
                    let error = AuthError(thrown: thrown)!
                    timeline.record(.app, "error \(error.code.rawValue) \(error.code): the Apple ID belongs to another account; error.updatedCredential signs in to it",
                                    .authError(code: error.code.rawValue, name: "\(error.code)", message: error.message,
                                               updatedCredential: error.updatedCredential != nil))
                    guard let updated = error.updatedCredential else { throw error }
                    let other = try await newApp().signIn(with: updated)
                    timeline.record(.app, "signed in with the updated credential to uid \(other.user.uid.prefix(8))… (the Apple ID's own account)",
                                    .signedIn(uid: other.user.uid, path: .apple))
                    return .authError(error.code)
                }
                timeline.record(.app, "linked: uid \(phoneUser.uid.prefix(8))… has \(phoneUser.providerData.map(\.providerID).joined(separator: " and "))",
                                .signedIn(uid: phoneUser.uid, path: .apple))
                return .linked
            case .revokeThenDelete:
                let (credential, sheetCredential) = try await sheet(apple.appleUser)
                let user = try await auth.signIn(with: credential).user
                timeline.record(.app, to: .backend, "Auth.auth().revokeToken(withAuthorizationCode:) with the sheet's authorization code")
                try await auth.revokeToken(withAuthorizationCode: sheetCredential.authorizationCode)
                timeline.record(.app, to: .backend, "user.delete()")
                try await user.delete()
                timeline.record(.app, "account \(user.uid.prefix(8))… deleted; Apple's grant revoked", .signedIn(uid: user.uid, path: .deleted))
                return .deleted
            }
        } catch {
            return ScenarioRunner.outcome(of: error, in: timeline)
        }
    }

    /// The Sign in with Apple sheet for `who` (a new nonce, its hash in the request), then the
    /// credential as the app builds it, in the timeline.
    static func appleCredential(_ who: String, bundleID: String, hideEmail: Bool, world: PhoneAuthWorld, timeline: Timeline,
                                rawSent: String?? = nil, clientID: String? = nil, issuedAt: Date? = nil,
                                use: String = "Auth.auth().signIn(with:") async throws -> (OAuthCredential, AppleSignInSheet.Credential) {
        let raw = AppleNonce.random()
        let hash = AppleNonce.sha256(raw)
        timeline.record(.app, to: .device, "ASAuthorizationAppleIDProvider().createRequest(): scopes [.fullName, .email], nonce = sha256(\(raw.prefix(6))…) = \(hash.prefix(8))…")
        let credential = try await world.appleSheet.authorize(clientID: clientID ?? bundleID, appleUser: who, nonce: hash,
                                                              hideEmail: hideEmail, issuedAt: issuedAt)
        timeline.record(.device, to: .app,
                        "\(who) consents: identity token for \(clientID ?? bundleID) (sub \(credential.user.prefix(12))…)\(credential.fullName == nil ? ", no name (not the first authorization)" : ", with name and email (first authorization)")\(issuedAt != nil ? ", issued \(Int(Date().timeIntervalSince(issuedAt!))) s ago" : "")",
                        .appleAuthorized(sub: credential.user, nonce: hash, aud: clientID ?? bundleID,
                                         firstAuthorization: credential.fullName != nil,
                                         ageSeconds: issuedAt.map { Int(Date().timeIntervalSince($0)) } ?? 0))
        let sent = rawSent ?? raw
        timeline.record(.app, to: .backend,
                        "\(use) OAuthProvider.appleCredential(withIDToken:rawNonce: \(sent.map { "\"\($0.prefix(6))…\"" } ?? "nil"), fullName:))",
                        .appleCredential(rawNonce: sent ?? "", rawNonceHash: sent.map(AppleNonce.sha256) ?? "", tokenNonce: hash))
        return (OAuthProvider.appleCredential(withIDToken: credential.identityToken, rawNonce: sent, fullName: credential.fullName), credential)
    }
}
