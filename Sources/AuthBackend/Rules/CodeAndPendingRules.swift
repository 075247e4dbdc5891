import Foundation
import IdentityToolkitAPI
import Utilities

// Rules decided from the backend's state alone: what a code check or a pending credential is.
// `IdentityToolkit` commits what they decide and answers; these values are tested without it
// (Tests/BackendRouteTests/BackendRuleTests.swift).

extension BackendState {
    /// What checking a typed code against a session is.
    enum CodeCheck: Hashable {
        /// The right code: the session is spent (`sessionUsed`).
        case spend(sessionInfo: String, BackendState.Session)
        /// A wrong code: it counts (`wrongCode`), and the answer is INVALID_CODE.
        case wrongCode(sessionInfo: String)
        /// Refused before the code is compared.
        case refuse(IdentityToolkitError)
    }

    /// A code session is spent when it exists for `purpose`, is unused and unexpired, has
    /// attempts left, and `code` is its code (compared in constant time).
    func checkCode(sessionInfo: String?, code: String?, purpose: SessionPurpose?, now: Date,
                   configuration: BackendConfiguration) -> CodeCheck {
        guard let sessionInfo, !sessionInfo.isEmpty else { return .refuse(IdentityToolkitError(.missingSessionInfo)) }
        guard let code, !code.isEmpty else { return .refuse(IdentityToolkitError(.missingCode)) }
        guard let session = sessions[sessionInfo], !session.used, session.purpose == purpose else {
            return .refuse(IdentityToolkitError(.invalidSessionInfo))
        }
        guard now.timeIntervalSince(session.createdAt) < configuration.codeLifetime else { return .refuse(IdentityToolkitError(.sessionExpired)) }
        guard session.attempts < configuration.maximumCodeAttempts else { return .refuse(IdentityToolkitError(.tooManyAttemptsTryLater)) }
        guard constantTimeEquals(session.code, code) else { return .wrongCode(sessionInfo: sessionInfo) }
        return .spend(sessionInfo: sessionInfo, session)
    }

    /// What a first factor's pending credential is, when a second factor comes with it.
    enum PendingCheck: Hashable {
        /// Issued here, unspent, in time, for a user who still exists.
        case valid(digest: String, provider: String, user: BackendUser)
        /// Refused, and why (the wire error is the same for most causes).
        case refuse(IdentityToolkitError, RejectionCause?)
    }

    /// - Parameter digest: the pending credential's SHA-256 (how the state keeps it).
    func checkPending(digest: String, now: Date, lifetime: TimeInterval) -> PendingCheck {
        guard let pending = mfaPending[digest] else {
            return .refuse(IdentityToolkitError(.invalidMFAPendingCredential, "The MFA pending credential is not one this backend issued."),
                           .pendingCredentialUnknown)
        }
        guard !pending.used else {
            return .refuse(IdentityToolkitError(.invalidMFAPendingCredential, "The MFA pending credential was already used: sign in with the first factor again."),
                           .pendingCredentialSpent)
        }
        guard now.timeIntervalSince(pending.at) <= lifetime else {
            return .refuse(IdentityToolkitError(
                .invalidMFAPendingCredential,
                "The MFA pending credential has expired (\(Int(lifetime)) s after the first factor): sign in with the first factor again."),
                .pendingCredentialExpired)
        }
        guard let user = users[pending.localId] else {
            return .refuse(IdentityToolkitError(.userNotFound, "The user of the MFA pending credential no longer exists."), nil)
        }
        return .valid(digest: digest, provider: pending.provider, user: user)
    }
}
