import Foundation
import IdentityToolkitAPI
import Logging
import RS256
import Utilities

/// The core as the rules still written on the actor reach it: its state and settings, and its
/// helpers, within a call (``IdentityToolkit/change(_:)-(()->T)``). Rules moved into
/// ``BackendCore`` use none of this.
extension IdentityToolkit {
    var state: BackendState {
        get { core.state }
        _modify { yield &core.state }
    }
    var testPhoneNumbers: [String: String] { core.testPhoneNumbers }
    var smsDefenseSettings: SMSDefenseSettings { core.smsDefenseSettings }
    var emulatorSignIn: EmulatorSignInSettings { core.emulatorSignIn }

    /// Applies a change within the call; the call's end keeps it.
    func commit(_ record: BackendRecord) throws(IdentityToolkitError) {
        core.commit(record)
    }

    /// Tells of a refusal (within a call, once its records are kept) and gives back its error.
    func reject(_ endpoint: BackendOperation, _ error: IdentityToolkitError, cause: RejectionCause? = nil) -> IdentityToolkitError {
        if core.isHandling { return core.reject(endpoint, error, cause: cause) }
        logger.info("request refused", metadata: ["endpoint": "\(endpoint)", "error": "\(error.message)"])
        emitter()(.rejected(endpoint: endpoint, error, cause: cause))
        return error
    }

    func grantTokens(for user: BackendUser, provider: String, secondFactor: String? = nil, claims: String? = nil,
                     endpoint: BackendOperation) throws(IdentityToolkitError) -> TokenGrant {
        try core.grantTokens(for: user, provider: provider, secondFactor: secondFactor, claims: claims, endpoint: endpoint)
    }

    func requireEnabled(_ user: BackendUser, endpoint: BackendOperation) throws(IdentityToolkitError) {
        try core.requireEnabled(user, endpoint: endpoint)
    }

    func checkAppProof(number: String, iosReceipt: String?, iosSecret: String?, recaptchaToken: String?,
                       captchaResponse: String? = nil, recaptchaVersion: String? = nil, clientType: String? = nil,
                       action: RecaptchaAction, endpoint: BackendOperation) throws(IdentityToolkitError) {
        try core.checkAppProof(number: number, iosReceipt: iosReceipt, iosSecret: iosSecret, recaptchaToken: recaptchaToken,
                               captchaResponse: captchaResponse, recaptchaVersion: recaptchaVersion, clientType: clientType,
                               action: action, endpoint: endpoint)
    }

    func openSession(number: String, purpose: SessionPurpose?, languageCode: String?,
                     endpoint: BackendOperation) throws(IdentityToolkitError) -> String {
        try core.openSession(number: number, purpose: purpose, languageCode: languageCode, endpoint: endpoint)
    }

    func spendSession(_ sessionInfo: String?, code: String?, purpose: SessionPurpose?,
                      endpoint: BackendOperation) throws(IdentityToolkitError) -> BackendState.Session {
        try core.spendSession(sessionInfo, code: code, purpose: purpose, endpoint: endpoint)
    }

    func signedInUser(_ idToken: String?, endpoint: BackendOperation) throws(IdentityToolkitError) -> (BackendUser, String) {
        try core.signedInUser(idToken, endpoint: endpoint)
    }

    func newLocalID(hint: String?) -> String { core.newLocalID(hint: hint) }

    static func digest(_ secret: String) -> String { BackendCore.digest(secret) }

    /// `count` random bytes in base64url (libcrypto's generator).
    static func randomString(bytes count: Int) -> String {
        Base64URL.encode(SecureRandom.bytes(count))
    }
}
