import Foundation
import IdentityToolkitAPI
import Utilities

// Rules decided from the backend's state alone: what a code check or a pending credential is.
// `IdentityToolkit` commits what they decide and answers; these values are tested without it
// (Tests/BackendRouteTests/BackendRuleTests.swift).

extension BackendState {
    /// What checking a typed code against a session is.
    enum CodeCheck: Hashable {
        /// The right code: the session is spent (`sessionUsed`, which drops it).
        case spend(sessionInfo: String, BackendState.Session)
        /// A wrong code: it counts (`wrongCode`), and the answer is INVALID_CODE.
        case wrongCode(sessionInfo: String)
        /// Refused before the code is compared.
        case refuse(IdentityToolkitError)
    }

    /// A code session is spent when it exists for `purpose` (a spent one no longer does), is
    /// unexpired, has attempts left, and `code` is its code (compared in constant time).
    func checkCode(sessionInfo: String?, code: String?, purpose: SessionPurpose?, now: Date,
                   configuration: BackendConfiguration) -> CodeCheck {
        guard let sessionInfo, !sessionInfo.isEmpty else { return .refuse(IdentityToolkitError(.missingSessionInfo)) }
        guard let code, !code.isEmpty else { return .refuse(IdentityToolkitError(.missingCode)) }
        // Unknown, spent (a spent session is dropped) or for another purpose.
        guard let session = sessions[sessionInfo], session.purpose == purpose else {
            return .refuse(IdentityToolkitError(.invalidSessionInfo))
        }
        guard now.timeIntervalSince(session.createdAt) < configuration.codeLifetime else { return .refuse(IdentityToolkitError(.sessionExpired)) }
        guard session.attempts < configuration.maximumCodeAttempts else { return .refuse(IdentityToolkitError(.tooManyAttemptsTryLater)) }
        guard ConstantTime.equals(session.code, code) else { return .wrongCode(sessionInfo: sessionInfo) }
        return .spend(sessionInfo: sessionInfo, session)
    }

    /// What a first factor's pending credential is, when a second factor comes with it.
    enum PendingCheck: Hashable {
        /// Issued here, unspent, in time, for a user who still exists.
        case valid(digest: String, provider: ProviderID, user: BackendUser)
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
        guard let user = users(in: pending.tenant).byID[pending.localId] else {
            return .refuse(IdentityToolkitError(.userNotFound, "The user of the MFA pending credential no longer exists."), nil)
        }
        return .valid(digest: digest, provider: pending.provider, user: user)
    }
}

extension BackendState {
    /// What a code request for a number is, before any code is made.
    enum SessionRequest: Hashable {
        /// A code for this number and purpose is still valid: its session again, no second SMS.
        case reuse(sessionInfo: String)
        /// A new session, texted unless `testCode` (a test number's fixed code: no SMS).
        case open(testCode: String?)
        /// Refused: the region is not allowed, or a quota is used up.
        case refuse(IdentityToolkitError)
    }

    /// The region policy and the day's quotas apply to real numbers; test numbers get their
    /// fixed code; while a number's code (for the same purpose) is valid, the request is
    /// re-entrant.
    func requestSession(number: String, purpose: SessionPurpose?, testCode: String?, now: Date,
                        configuration: BackendConfiguration) -> SessionRequest {
        if testCode == nil, let policy = configuration.smsRegionPolicy, !policy.allows(PhoneNumbers.region(of: number)) {
            return .refuse(IdentityToolkitError(.operationNotAllowed, "SMS unable to be sent until this region enabled by the app developer."))
        }
        if let info = latestSession[Self.sessionKey(number, purpose)], let session = sessions[info],
           now.timeIntervalSince(session.createdAt) < configuration.codeLifetime {
            return .reuse(sessionInfo: info)
        }
        if testCode == nil {
            // Quotas count the day's SMS (only when a quota is set: the outbox can be long).
            let today = configuration.smsPerNumberPerDay == nil && configuration.smsPerProjectPerDay == nil
                ? [] : outboxMessages.filter { now.timeIntervalSince($0.sentAt) < 86_400 }
            if let limit = configuration.smsPerNumberPerDay, today.filter({ $0.phoneNumber == number }).count >= limit {
                return .refuse(IdentityToolkitError(.quotaExceeded, "\(limit) SMS to this number today"))
            }
            if let limit = configuration.smsPerProjectPerDay, today.count >= limit {
                return .refuse(IdentityToolkitError(.quotaExceeded, "the project's \(limit) SMS for today are used"))
            }
        }
        return .open(testCode: testCode)
    }
}
