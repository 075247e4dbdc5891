import IdentityToolkitAPI
import APNsWire
import Utilities
import Foundation

/// Something the backend did. The timelines (`RunFact.backend`) and the inspector's sign-ins keep
/// the event as it is; its one wording is ``line``, below. Adding one: the case here and its line;
/// the inspector places it in a sign-in (`FlowHistory`, whose switch the compiler points at).
///
/// Codable so that a fleet's nodes can keep their events in the shared store for every node's
/// inspector (``BackendEventSink``), and a timeline's `--json` lines carry its values; the coding
/// is Swift's own for enums.
package enum BackendEvent: Sendable, Hashable, Codable {
    /// verifyClient made a receipt and is about to push its secret.
    case pushing(appToken: String, environment: APNsEnvironment, receipt: String)
    /// …and APNs answered.
    case verifyClient(appToken: String, environment: APNsEnvironment, receipt: String, push: PushResult)
    case smsSent(SMSMessage)
    case codeReused(phoneNumber: String)
    case signedIn(uid: String, phoneNumber: String, isNewUser: Bool)
    /// signInWithIdp for apple.com: signed in, linked or reauthenticated.
    case appleSignIn(uid: String, sub: String, isNewUser: Bool, linked: Bool)
    /// The user's Apple grant was revoked, or the account deleted.
    case appleRevoked(uid: String?, sub: String)
    case accountDeleted(uid: String)
    /// A first factor for a user with a second factor: a pending credential, not a session.
    case secondFactorRequired(uid: String, provider: ProviderID)
    /// A phone (its number), or a TOTP app (no number), was enrolled as a second factor.
    case secondFactorEnrolled(uid: String, enrollmentID: String, phoneNumber: String?)
    /// A second factor completed a sign-in.
    case secondFactorSignedIn(uid: String, enrollmentID: String)
    /// The user removed one of their second factors (`unenroll`).
    case secondFactorWithdrawn(uid: String, enrollmentID: String)
    /// The app asked for the project's reCAPTCHA config (SMS defense's state).
    case recaptchaConfig(phone: RecaptchaEnforcement)
    /// reCAPTCHA SMS defense assessed a code request's token.
    case recaptchaAssessment(endpoint: BackendOperation, enforcement: RecaptchaEnforcement, RecaptchaAssessment)
    /// A request refused with `error`; `cause` where one wire error has several causes a user
    /// fixes differently.
    case rejected(endpoint: BackendOperation, IdentityToolkitError, cause: RejectionCause?)
    /// Google's front end refused a request before Identity Toolkit saw it (a missing, invalid or
    /// iOS-restricted API key): the request's path and the error.
    case frontendRefused(path: String, IdentityToolkitError)
    /// A queued ``BackendFault`` answered a request instead of the toolkit.
    case faultAnswered(path: String, BackendFault)
    /// A sign-in or sign-up without a phone or an identity provider: `provider` `password`,
    /// `emailLink`, `anonymous` or `custom`.
    case accountSignIn(uid: String, provider: SignInMethod, email: String?, isNewUser: Bool)
    /// An email went out with a single-use code (the email outbox).
    case emailSent(OobEmail)
    /// An admin made an email action link (`returnOobLink`): its code is in the outbox, no email went out.
    case emailLinkGenerated(OobEmail)
    /// The app asked how `email` signs in (`fetchSignInMethods(forEmail:)`, `createAuthUri`): the
    /// methods the backend knows (`password`, `apple.com`; none: empty), and whether email
    /// enumeration protection kept them from the answer.
    case signInMethodsAsked(email: String, methods: [SignInMethod], hidden: Bool)
    /// An identity provider's sign-in page (`OAuthProvider`'s web flow) was shown for the app's
    /// `eventID`: what the user does there, and whether it redirects to the app.
    case providerPage(provider: String, eventID: String, answer: String, redirects: Bool)
    /// A code was asked for `phoneNumber` and the app proved itself this way (what the inspector's
    /// sign-ins show as the verification path).
    /// `receipt` is the app credential's, when a silent push proved the app.
    case codeRequested(phoneNumber: String, proof: AppVerification, receipt: String?, endpoint: BackendOperation)
}

/// Why the backend refused a request, where one wire error has several causes that a user fixes
/// differently (the service's message says which; the app sees only the error's code). Kept as a
/// code, so that `explain` and the inspector never read the message.
package enum RejectionCause: String, Sendable, Codable, CaseIterable {
    /// `INVALID_MFA_PENDING_CREDENTIAL`: not one this backend issued.
    case pendingCredentialUnknown
    /// …already used for a second factor.
    case pendingCredentialSpent
    /// …older than its lifetime (10 minutes by default).
    case pendingCredentialExpired
    /// `INVALID_IDP_RESPONSE`: Apple's identity token is for an audience the project's Apple
    /// provider does not accept (neither the bundle ID nor a configured services ID).
    case appleTokenAudience
    /// …issued by someone else than `https://appleid.apple.com`.
    case appleTokenIssuer
    /// …past its `exp`.
    case appleTokenExpired
    /// …empty, not a JWT, or without a subject.
    case appleTokenMalformed
}

extension BackendEvent {
    /// Who takes part in a step of a sign-in as the backend sees it.
    package enum Party: String, Sendable, Hashable, Codable {
        /// The app (the SDK).
        case app
        /// This backend (Identity Toolkit).
        case backend
        /// APNs, as the backend's APNs client talks to it.
        case apns
    }

    /// One event as one line of a sequence diagram: who spoke to whom (`to` nil: the backend
    /// noted it), what, and whether it went wrong. The one wording of the backend's events: the
    /// scenarios' timelines (`authsim run`) and the inspector's sign-ins both draw these lines.
    package struct Line: Sendable, Hashable {
        package var from: Party
        package var to: Party?
        package var text: String
        package var bad: Bool

        init(_ from: Party, to: Party? = nil, _ text: String, bad: Bool = false) {
            self.from = from
            self.to = to
            self.text = text
            self.bad = bad
        }
    }

    /// The event's case name (`codeRequested`): what the inspector's steps and the `--json`
    /// lines call it.
    package var kind: String { enumCaseName(self) }

    /// A refusal's parts, for whatever states its cause: the operation (`sendVerificationCode`, or
    /// the path's last part when Google's front end or an injected fault answered), the service's
    /// code, its detail and, where one code has several causes, which. `nil` for anything else.
    package var refusal: (endpoint: String, code: IdentityToolkitError.Code, detail: String?, cause: RejectionCause?)? {
        switch self {
        case .rejected(let endpoint, let error, let cause): (endpoint.rawValue, error.code, error.detail, cause)
        case .frontendRefused(let path, let error): (Self.endpoint(path), error.code, error.message, nil)
        case .faultAnswered(let path, let fault): (Self.endpoint(path), IdentityToolkitError.Code(rawValue: fault.serverCode), fault.serverMessage, nil)
        default: nil
        }
    }

    /// The event as a line.
    package var line: Line {
        switch self {
        case .recaptchaConfig(let phone):
            return Line(.backend, to: .app,
                        "recaptchaConfig: the phone provider's reCAPTCHA SMS defense is \(phone.rawValue)\(phone == .off ? "" : " (with the project's reCAPTCHA Enterprise key)")")
        case .pushing(let token, let environment, let receipt):
            return Line(.backend, to: .apns, "verifyClient: receipt \(receipt.prefix(8))… for token \(token.prefix(8))…; the secret goes by silent push via \(environment)")
        case .verifyClient(_, let environment, _, let push):
            guard let status = push.status else {
                return Line(.backend, "the silent push to \(environment) was not sent: \(push.error ?? "no reason given"); verifyClient returns the receipt to the app either way",
                            bad: true)
            }
            let answer = [String(status), push.reason?.rawValue].compactMap { $0 }.joined(separator: " ")
            return Line(.apns, to: .backend, "\(environment) answered \(answer); verifyClient returns the receipt to the app either way", bad: !push.accepted)
        case .codeRequested(let phone, let proof, _, let endpoint):
            return Line(.app, to: .backend, "\(endpoint) for \(phone): the app is proved by \(proof)")
        case .smsSent(let message):
            return Line(.backend, to: .app, "SMS to \(message.phoneNumber): \"\(message.text)\"")
        case .codeReused(let phone):
            return Line(.backend, "sendVerificationCode: a code for \(phone) is still valid, no second SMS")
        case .signedIn(let uid, let phone, let isNewUser):
            return Line(.backend, to: .app, "signInWithPhoneNumber: \(phone) → uid \(uid.prefix(8))…\(isNewUser ? " (new user)" : "")")
        case .appleSignIn(let uid, let sub, let isNewUser, let linked):
            return Line(.backend, to: .app,
                        "signInWithIdp apple.com: Apple ID \(sub.prefix(12))… \(linked ? "linked to" : "signed in as") uid \(uid.prefix(8))…\(isNewUser ? " (new user)" : "")")
        case .appleRevoked(let uid, let sub):
            return Line(.backend, "revokeToken: Apple grant of \(sub.prefix(12))… revoked\(uid.map { " for uid \($0.prefix(8))…" } ?? "")")
        case .accountDeleted(let uid):
            return Line(.backend, "deleteAccount: uid \(uid.prefix(8))… deleted")
        case .secondFactorRequired(let uid, let provider):
            return Line(.backend, to: .app, "signInWithIdp \(provider): uid \(uid.prefix(8))… has a second factor: answers mfaPendingCredential and mfaInfo, no ID token")
        case .secondFactorEnrolled(let uid, let enrollmentID, let phone):
            return Line(.backend, to: .app, "mfaEnrollment:finalize: \(phone ?? "a TOTP app") enrolled as second factor \(enrollmentID.prefix(8))… of uid \(uid.prefix(8))…")
        case .secondFactorSignedIn(let uid, let enrollmentID):
            return Line(.backend, to: .app,
                        "mfaSignIn:finalize: second factor \(enrollmentID.prefix(8))… passed; uid \(uid.prefix(8))… signed in (sign_in_second_factor: phone)")
        case .secondFactorWithdrawn(let uid, let enrollmentID):
            return Line(.backend, to: .app, "mfaEnrollment:withdraw: second factor \(enrollmentID.prefix(8))… of uid \(uid.prefix(8))… removed")
        case .recaptchaAssessment(let endpoint, let enforcement, let assessment):
            return Line(.backend, "\(endpoint): SMS defense (\(enforcement.rawValue)) assesses the reCAPTCHA Enterprise token: \(assessment.verdict.rawValue): \(assessment.detail)",
                        bad: assessment.verdict != .passed)
        case .rejected(let endpoint, let error, _):
            return Line(.backend, to: .app, "\(endpoint) refuses: \(error.message)", bad: true)
        case .frontendRefused(let path, let error):
            return Line(.backend, to: .app, "Google's front end refuses \(Self.endpoint(path)) before Identity Toolkit sees it: HTTP \(error.httpStatus) \(error.message)", bad: true)
        case .accountSignIn(let uid, let provider, let email, let isNewUser):
            let who = email.map { "\($0) " } ?? ""
            return Line(.backend, to: .app, "\(provider) sign-in: \(who)→ uid \(uid.prefix(8))…\(isNewUser ? " (new user)" : "")")
        case .emailSent(let message):
            return Line(.backend, "email to \(message.email): \(message.requestType.rawValue) with a single-use code (the email outbox)")
        case .emailLinkGenerated(let message):
            return Line(.backend, "an admin's \(message.requestType.rawValue) link for \(message.email) (returnOobLink): answered to the caller, no email sent")
        case .signInMethodsAsked(let email, let methods, let hidden):
            let known = methods.isEmpty ? "no sign-in methods" : methods.map(\.rawValue).joined(separator: ", ")
            return Line(.backend, to: .app, hidden
                        ? "createAuthUri for \(email): \(known), not answered: email enumeration protection is on, so fetchSignInMethods returns []"
                        : "createAuthUri for \(email): \(known)")
        case .providerPage(let provider, let eventID, let answer, let redirects):
            return Line(.backend, to: .app, "\(provider) sign-in page for event \(eventID): \(answer)\(redirects ? " It redirects to the app's scheme." : "")",
                        bad: !redirects)
        case .faultAnswered(let path, let fault):
            return Line(.backend, to: .app, "\(Self.endpoint(path)) answers an injected HTTP \(fault.status) \(fault.serverMessage ?? String(fault.body.prefix(80)))", bad: true)
        }
    }

    /// The operation a request path names (`/v1/accounts:sendVerificationCode` →
    /// `accounts:sendVerificationCode`).
    package static func endpoint(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}
