import APNsWire
import AuthBackend
import Foundation
import IdentityToolkitAPI

/// The backend's facts as `--json` lines had them before the timeline kept backend events as they
/// are (kind `backend`): each its own kind with a few of the event's values. They are read into
/// the event they came from, with what the line did not keep left empty (an SMS's text, a code
/// request's number), so that `authsim explain` reads an older timeline as it reads a new one.
enum OlderBackendFact: Decodable {
    case verifyClient(token: String, environment: APNsEnvironment, receipt: String)
    case pushAnswer(token: String, environment: APNsEnvironment, status: Int?, reason: APNsReason?, error: String?)
    case codeRequested(endpoint: String, proof: AppVerification)
    case smsSent(number: String)
    case backendRejected(endpoint: String, error: String, detail: String?, cause: RejectionCause?)
    case appleSignIn(uid: String, sub: String, linked: Bool)
    case mfaPending(uid: String, provider: String)
    case mfaEnrolled(uid: String, enrollmentID: String, number: String)
    case mfaSignedIn(uid: String, enrollmentID: String)
    case smsDefense(state: RecaptchaEnforcement)
    case recaptchaAssessment(endpoint: String, enforcement: RecaptchaEnforcement, verdict: RecaptchaAssessment.Verdict, riskScore: Double?, detail: String)

    /// The `kind`s they were written under, and the case each is.
    static let kinds: [String: String] = [
        "backend.verifyClient": "verifyClient", "sender.answer": "pushAnswer", "codeRequested": "codeRequested",
        "backend.sms": "smsSent", "backend.rejected": "backendRejected", "backend.appleSignIn": "appleSignIn",
        "backend.mfaPending": "mfaPending", "backend.mfaEnrolled": "mfaEnrolled", "backend.mfaSignedIn": "mfaSignedIn",
        "app.recaptchaConfig": "smsDefense", "backend.recaptchaAssessment": "recaptchaAssessment",
    ]

    /// Facts that the oldest of these lines left out, and what they meant.
    static let leftOut: [String: [String: String]] = [
        "verifyClient": ["receipt": ""],
        "pushAnswer": ["token": ""],
        "recaptchaAssessment": ["detail": ""],
    ]

    /// The event a line of kind `kind` (one of ``kinds``) stood for.
    static func event(kind: String, facts: [String: String]) throws(TimelineFormatError) -> BackendEvent? {
        guard let name = kinds[kind] else { return nil }
        var facts = facts
        for (fact, meaning) in leftOut[name] ?? [:] where facts[fact] == nil { facts[fact] = meaning }
        guard let older = try FactCoding.decode(OlderBackendFact.self, name: name, facts: facts, kind: kind) else { return nil }
        return try older.event(kind: kind)
    }

    private func operation(_ endpoint: String, kind: String) throws(TimelineFormatError) -> BackendOperation {
        guard let operation = BackendOperation(rawValue: endpoint) else {
            throw TimelineFormatError("\(kind): fact endpoint is \"\(endpoint)\", expected \(FactCoding.expected(BackendOperation.self))")
        }
        return operation
    }

    private func event(kind: String) throws(TimelineFormatError) -> BackendEvent {
        let never = Date(timeIntervalSinceReferenceDate: 0)
        switch self {
        case .verifyClient(let token, let environment, let receipt):
            return .pushing(appToken: token, environment: environment, receipt: receipt)
        case .pushAnswer(let token, let environment, let status, let reason, let error):
            return .verifyClient(appToken: token, environment: environment, receipt: "", push: PushResult(status: status, reason: reason, error: error))
        case .codeRequested(let endpoint, let proof):
            return .codeRequested(phoneNumber: "", proof: proof, receipt: nil, endpoint: try operation(endpoint, kind: kind))
        case .smsSent(let number):
            return .smsSent(SMSMessage(phoneNumber: number, code: "", sessionInfo: "", languageCode: nil, text: "", sentAt: never))
        case .backendRejected(let endpoint, let error, let detail, let cause):
            let code = IdentityToolkitError.Code(rawValue: error)
            // Refusals by Google's front end and injected faults were written under the path's
            // last part (`accounts:sendVerificationCode`), which names no operation.
            guard let operation = BackendOperation(rawValue: endpoint) else {
                return .frontendRefused(path: endpoint, IdentityToolkitError(code, frontend: .init(message: detail ?? error, reason: "", status: "", errorInfo: nil),
                                                                             status: code.defaultStatus))
            }
            return .rejected(endpoint: operation, IdentityToolkitError(code, detail), cause: cause)
        case .appleSignIn(let uid, let sub, let linked):
            return .appleSignIn(uid: uid, sub: sub, isNewUser: false, linked: linked)
        case .mfaPending(let uid, let provider):
            return .secondFactorRequired(uid: uid, provider: ProviderID(rawValue: provider))
        case .mfaEnrolled(let uid, let enrollmentID, let number):
            return .secondFactorEnrolled(uid: uid, enrollmentID: enrollmentID, phoneNumber: number)
        case .mfaSignedIn(let uid, let enrollmentID):
            return .secondFactorSignedIn(uid: uid, enrollmentID: enrollmentID)
        case .smsDefense(let state):
            return .recaptchaConfig(phone: state)
        case .recaptchaAssessment(let endpoint, let enforcement, let verdict, let riskScore, let detail):
            return .recaptchaAssessment(endpoint: try operation(endpoint, kind: kind), enforcement: enforcement,
                                        RecaptchaAssessment(verdict: verdict, action: nil, riskScore: riskScore, detail: detail))
        }
    }
}
