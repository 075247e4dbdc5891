import DeviceOS
import Foundation

/// The reCAPTCHA presentation's rules: one page at a time (`webContextCancelled` for a second), the
/// redirect that ends it, and the ones `canHandle(url)` refuses and why (no page, another event, a
/// replay of an event already handled, a look-alike URL). A value: no locks, no waits, no I/O;
/// `Auth` holds one under its lock and resumes the waiting page with what it decides.
struct PresentationBook: Sendable, Hashable {
    struct Active: Sendable, Hashable {
        let eventID: String
        let scheme: String
        let authType: WebAuthType
    }
    /// The page being presented.
    private(set) var active: Active?
    /// Events whose presentation ended (newest last, at most ``maximumFinished``): a later
    /// redirect for one is a replay.
    private(set) var finished: [String] = []

    static let maximumFinished = 32

    /// What an opened URL is to the presentation.
    enum Decision: Sendable, Hashable {
        /// It ends the presentation of `eventID` with `redirect` (a token or the page's error).
        case takes(eventID: String, redirect: ReCAPTCHAFlow.Redirect)
        /// It is not Auth's, and why.
        case refuses(URLRefusal)
    }

    /// Starts presenting `eventID`, a page of `authType` whose redirect comes to `scheme`.
    /// - Returns: false while another page is presented (the SDK's `webContextCancelled`).
    mutating func begin(eventID: String, scheme: String, authType: WebAuthType = .verifyApp) -> Bool {
        guard active == nil else { return false }
        active = Active(eventID: eventID, scheme: scheme, authType: authType)
        return true
    }

    /// `canHandle(url)`'s decision; a URL it takes ends the presentation.
    mutating func open(_ url: URL) -> Decision {
        guard let active else {
            if let event = ReCAPTCHAFlow.eventID(of: url), finished.contains(event) {
                return .refuses(URLRefusal(.replayed, "the redirect for event \(event) was already handled: a replay", eventID: event))
            }
            return .refuses(URLRefusal(.noActivePresentation, "no page (reCAPTCHA, a provider's sign-in) is being presented, so no redirect is expected",
                                       eventID: ReCAPTCHAFlow.eventID(of: url)))
        }
        let redirect = ReCAPTCHAFlow.read(url, scheme: active.scheme, eventID: active.eventID, authType: active.authType)
        if case .notOurs(let refusal) = redirect {
            if refusal.code == .eventMismatch, let event = refusal.eventID, finished.contains(event) {
                return .refuses(URLRefusal(.replayed, "the redirect for event \(event) was already handled: a replay (the page presented now is event \(active.eventID))",
                                           eventID: event))
            }
            return .refuses(refusal)
        }
        finish(active.eventID)
        return .takes(eventID: active.eventID, redirect: redirect)
    }

    /// The web view closed with `eventID` still presented: the presentation is cancelled.
    /// - Returns: whether it was the one presented.
    mutating func end(eventID: String) -> Bool {
        guard active?.eventID == eventID else { return false }
        finish(eventID)
        return true
    }

    /// The app's process died: nothing is presented any more (nothing is remembered as handled).
    mutating func abandon() { active = nil }

    private mutating func finish(_ eventID: String) {
        active = nil
        finished.append(eventID)
        if finished.count > Self.maximumFinished { finished.removeFirst(finished.count - Self.maximumFinished) }
    }
}
