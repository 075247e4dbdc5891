import Foundation
import IdentityToolkitAPI
import Synchronization

/// `UserProfileChangeRequest` (FirebaseAuth 12.19 `User/UserProfileChangeRequest.swift`): the
/// display name and photo URL to change, sent by ``commitChanges()`` once. Only what was set is
/// sent; setting a value, or committing again, after a commit stops the app with the SDK's message.
public final class UserProfileChangeRequest: NSObject {
    private struct Changes {
        var displayName: String?
        var displayNameWasSet = false
        var photoURL: URL?
        var photoURLWasSet = false
        var consumed = false
    }
    private let user: User
    private let changes = Mutex(Changes())

    init(_ user: User) { self.user = user }

    public var displayName: String? {
        get { changes.withLock { $0.displayName } }
        set {
            changes.withLock { changes in
                if changes.consumed { fatalError("Internal Auth Error: Invalid call to setDisplayName after commitChanges.") }
                changes.displayNameWasSet = true
                changes.displayName = newValue
            }
        }
    }

    public var photoURL: URL? {
        get { changes.withLock { $0.photoURL } }
        set {
            changes.withLock { changes in
                if changes.consumed { fatalError("Internal Auth Error: Invalid call to setPhotoURL after commitChanges.") }
                changes.photoURLWasSet = true
                changes.photoURL = newValue
            }
        }
    }

    /// `commitChanges()`: as the SDK's `executeUserUpdateWithChanges`, the account is read
    /// (`getAccountInfo`), then `setAccountInfo` sends what was set, with `returnSecureToken`; the
    /// user takes the new tokens and values and is saved. Nothing set: no request.
    public func commitChanges() async throws {
        try await AuthError.forApp {
            let taken = changes.withLock { changes -> Changes in
                if changes.consumed { fatalError("Internal Auth Error: commitChanges should only be called once.") }
                changes.consumed = true
                return changes
            }
            guard taken.displayNameWasSet || taken.photoURLWasSet else { return }
            try await user.signingOutIfTokenIsInvalid { () async throws(AuthError) in
                try await user.executeUpdate { request in
                    if taken.displayNameWasSet { request.displayName = taken.displayName }
                    if taken.photoURLWasSet { request.photoUrl = taken.photoURL?.absoluteString }
                }
                try user.changeProfile { record in
                    if taken.displayNameWasSet { record.displayName = taken.displayName }
                    if taken.photoURLWasSet { record.photoUrl = taken.photoURL?.absoluteString }
                }
            }
        }
    }

    /// `commitChanges(completion:)`: the completion on the main queue.
    public func commitChanges(completion: (((any Error)?) -> Void)? = nil) {
        complete(completion, with: self) { (request: UserProfileChangeRequest) async throws in try await request.commitChanges() }
    }
}

extension User {
    /// The SDK's `executeUserUpdateWithChanges` (UserProfileUpdate.swift 89–120): the account read
    /// (`getAccountInfo`), then `setAccountInfo` with the user's ID token, `returnSecureToken` and
    /// what `change` sets; the user takes the new tokens the answer carries.
    func executeUpdate(_ change: (inout SetAccountInfoRequest) -> Void) async throws(AuthError) {
        let auth = try owner()
        try await auth.loadAccountInfo(into: self)
        var request = SetAccountInfoRequest(idToken: try await idToken(), returnSecureToken: true)
        change(&request)
        try takeTokens(of: try await auth.backend.call(request))
    }

    /// `createProfileChangeRequest()`.
    public func createProfileChangeRequest() -> UserProfileChangeRequest { UserProfileChangeRequest(self) }

    /// `unlink(fromProvider:)` (the SDK's `UserProfileUpdate.unlink`): a provider the user does not
    /// have is `noSuchProvider` (17016) after the token is fetched, without a request; else
    /// `setAccountInfo` with `deleteProvider`, and the user loses the provider (and for `phone`
    /// its number) and takes the new tokens.
    @discardableResult
    public func unlink(fromProvider provider: String) async throws -> User {
        return try await AuthError.forApp {
            try await signingOutIfTokenIsInvalid { () async throws(AuthError) in
                let idToken = try await idToken()
                guard providerData.contains(where: { $0.providerID == provider }) else {
                    throw AuthError(.noSuchProvider, "user \(uid.prefix(8))… has no \(provider) provider to unlink")
                }
                let auth = try owner()
                let response = try await auth.backend.call(SetAccountInfoRequest(idToken: idToken, deleteProvider: [provider], returnSecureToken: true))
                try takeTokens(of: response)
                try changeProfile { record in
                    record.providerUserInfo?.removeAll { $0.providerId.rawValue == provider }
                    if provider == AuthProviderID.phone.rawValue { record.phoneNumber = nil }
                }
            }
            return self
        }
    }

    /// `unlink(fromProvider:completion:)`.
    public func unlink(fromProvider provider: String, completion: ((User?, (any Error)?) -> Void)? = nil) {
        complete(completion, with: self) { (user: User) async throws -> User in try await user.unlink(fromProvider: provider) }
    }
}

extension User {
    /// `updatePhoneNumber(_:)` (User.swift 256–290, `internalUpdateOrLinkPhoneNumber`):
    /// `verifyPhoneNumber` with the credential's code, the user's ID token and operation `UPDATE`;
    /// the user takes the answer's tokens and reloads (`getAccountInfo`), and is no longer
    /// anonymous. A number another account holds is `credentialAlreadyInUse` (17025) with the
    /// credential that signs in to it. A temporary-proof credential (from that error), where the
    /// SDK stops with fatalError ("Missing verificationCode"), is `missingVerificationCode` here.
    public func updatePhoneNumber(_ credential: PhoneAuthCredential) async throws {
        try await AuthError.forApp {
            try await signingOutIfTokenIsInvalid { () async throws(AuthError) in
                let idToken = try await idToken()
                if credential.temporaryProof != nil {
                    throw AuthError(.missingVerificationCode, "updatePhoneNumber takes a credential with a verification ID and code (the SDK stops here with fatalError: Missing verificationCode)")
                }
                let auth = try owner()
                let response = try await auth.backend.call(try credential.verifyRequest(operation: .update, idToken: idToken))
                if let inUse = PhoneAuthCredential.inUse(response) { throw inUse }
                guard response.idToken != nil, let refreshToken = response.refreshToken else {
                    throw AuthError(.internalError, "verifyPhoneNumber answered without tokens (the SDK stops with fatalError: missing token)")
                }
                try await auth.renew(self, idToken: response.idToken, refreshToken: refreshToken, expiresIn: response.expiresIn)
                try clearAnonymous()
            }
        }
    }

    /// `updatePhoneNumber(_:completion:)`.
    public func updatePhoneNumber(_ credential: PhoneAuthCredential, completion: (((any Error)?) -> Void)? = nil) {
        complete(completion, with: self) { (user: User) async throws in try await user.updatePhoneNumber(credential) }
    }
}
