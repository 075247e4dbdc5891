import Foundation

/// The parts of an out-of-band link (an email sign-in link, a password reset link) as FirebaseAuth
/// 12.19 reads them (`ActionCode/ActionCodeURL.swift`): what an app takes from the link it was
/// opened with before it signs in with it or applies its code. Declared as the SDK declares it: an
/// `open` `NSObject` subclass, `@unchecked Sendable` (its fields are constants).
open class ActionCodeURL: NSObject, @unchecked Sendable {
    /// The link's `apiKey`; nil if it has none.
    public let apiKey: String?
    /// The link's `mode` as an operation (`signIn` is `.emailLink`, `resetPassword`
    /// `.passwordReset`, …); `.unknown` without one or for one the SDK does not know.
    public let operation: ActionCodeOperation
    /// The link's `oobCode`; nil if it has none.
    public let code: String?
    /// The link's `continueUrl`; nil if it has none or it is no URL.
    public let continueURL: URL?
    /// The link's `lang`; nil if it has none.
    public let languageCode: String?

    /// The link's parts, or nil when its query has none with a value. Where the first reading finds
    /// nothing the SDK reads the link's query as a link once more; that reading is kept as it is.
    public init?(link: String) {
        var items = Self.parseURL(link)
        if items.isEmpty, let query = URLComponents(string: link)?.query {
            items = Self.parseURL(query)
        }
        guard !items.isEmpty else { return nil }
        apiKey = items["apiKey"]
        operation = ActionCodeInfo.operation(forRequestType: items["mode"])
        code = items["oobCode"]
        continueURL = items["continueUrl"].flatMap { URL(string: $0) }
        languageCode = items["lang"]
    }

    /// The SDK's `parseURL(_:)`, quirks kept: the query is read decoded (`URLComponents.query`),
    /// each `&`-separated part split at every `=` and the second piece taken (so a value holding
    /// `=`, a `continueUrl` with its own query, is cut there), a part without a value skipped,
    /// and both pieces percent-decoded once more.
    static func parseURL(_ urlString: String) -> [String: String] {
        guard let query = URLComponents(string: urlString)?.query else { return [:] }
        var items: [String: String] = [:]
        for part in query.components(separatedBy: "&") {
            let pieces = part.split(separator: "=")
            guard pieces.count >= 2, let key = String(pieces[0]).removingPercentEncoding,
                  let value = String(pieces[1]).removingPercentEncoding else { continue }
            items[key] = value
        }
        return items
    }
}
