import Foundation
import Utilities

// What became of a URL the OS opened in the app. The refusals are those of the app's handler
// (FirebaseAuth's `canHandle(url)`), kept as codes so that a timeline and `explain` never read a
// message; the device returns them as the handler gave them.

/// Why a URL opened in the app was not handled by Auth.
package struct URLRefusal: CodedError {
    package enum Code: String, Sendable, Codable, CaseIterable {
        /// The app delegate does not pass opened URLs to `Auth.canHandle(url)`.
        case notForwarded
        /// No page (reCAPTCHA, a provider's sign-in) is being presented: nothing waits for a redirect.
        case noActivePresentation
        /// Not the callback scheme (another scheme the app registered, or a look-alike).
        case wrongScheme
        /// Not `<scheme>://firebaseauth/link`.
        case wrongHostOrPath
        /// No `deep_link_id` with the page's callback URL.
        case noDeepLink
        /// The callback's `authType` is not the presented page's (`verifyApp` for reCAPTCHA,
        /// `signInWithRedirect` for a provider's sign-in).
        case wrongAuthType
        /// The callback is for another event than the one presented.
        case eventMismatch
        /// The redirect for an event that was already handled: a replay.
        case replayed
    }
    package let code: Code
    package let message: String
    /// The event the URL named, when it named one.
    package let eventID: String?
    package init(_ code: Code, _ message: String, eventID: String? = nil) {
        self.code = code
        self.message = message
        self.eventID = eventID
    }
}

/// What became of a URL opened in the app.
package enum URLHandling: Sendable, Hashable {
    /// Auth took it: what it carried.
    case handled(String)
    /// Auth did not take it, and why.
    case refused(URLRefusal)

    package var isHandled: Bool { if case .handled = self { true } else { false } }
}
