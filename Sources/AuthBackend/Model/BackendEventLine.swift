import APNsWire
import IdentityToolkitAPI

extension BackendEvent {
    /// Who takes part in a step of a sign-in as the backend sees it.
    public enum Party: String, Sendable, Hashable, Codable {
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
    public struct Line: Sendable, Hashable {
        public var from: Party
        public var to: Party?
        public var text: String
        public var bad: Bool

        init(_ from: Party, to: Party? = nil, _ text: String, bad: Bool = false) {
            self.from = from
            self.to = to
            self.text = text
            self.bad = bad
        }
    }

    /// The event's case name (`codeRequested`): what the inspector's steps call it.
    public var kind: String {
        switch self {
        case .pushing: "pushing"
        case .verifyClient: "verifyClient"
        case .smsSent: "smsSent"
        case .codeReused: "codeReused"
        case .signedIn: "signedIn"
        case .appleSignIn: "appleSignIn"
        case .appleRevoked: "appleRevoked"
        case .accountDeleted: "accountDeleted"
        case .secondFactorRequired: "secondFactorRequired"
        case .secondFactorEnrolled: "secondFactorEnrolled"
        case .secondFactorSignedIn: "secondFactorSignedIn"
        case .recaptchaConfig: "recaptchaConfig"
        case .recaptchaAssessment: "recaptchaAssessment"
        case .rejected: "rejected"
        case .frontendRefused: "frontendRefused"
        case .faultAnswered: "faultAnswered"
        case .codeRequested: "codeRequested"
        case .accountSignIn: "accountSignIn"
        case .emailSent: "emailSent"
        }
    }

    /// The event as a line.
    public var line: Line {
        switch self {
        case .recaptchaConfig(let phone):
            return Line(.backend, to: .app,
                        "recaptchaConfig: the phone provider's reCAPTCHA SMS defense is \(phone.rawValue)\(phone == .off ? "" : " (with the project's reCAPTCHA Enterprise key)")")
        case .pushing(let token, let environment, let receipt):
            return Line(.backend, to: .apns, "verifyClient: receipt \(receipt.prefix(8))… for token \(token.prefix(8))…; the secret goes by silent push via \(environment)")
        case .verifyClient(_, let environment, _, let push):
            let answer = [push.status.map(String.init), push.reason?.rawValue, push.error].compactMap { $0 }.joined(separator: " ")
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
            return Line(.backend, to: .app, "mfaEnrollment:finalize: \(phone) enrolled as second factor \(enrollmentID.prefix(8))… of uid \(uid.prefix(8))…")
        case .secondFactorSignedIn(let uid, let enrollmentID):
            return Line(.backend, to: .app,
                        "mfaSignIn:finalize: second factor \(enrollmentID.prefix(8))… passed; uid \(uid.prefix(8))… signed in (sign_in_second_factor: phone)")
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
        case .faultAnswered(let path, let fault):
            return Line(.backend, to: .app, "\(Self.endpoint(path)) answers an injected HTTP \(fault.status) \(fault.serverMessage ?? String(fault.body.prefix(80)))", bad: true)
        }
    }

    /// The operation a request path names (`/v1/accounts:sendVerificationCode` →
    /// `accounts:sendVerificationCode`).
    public static func endpoint(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}
