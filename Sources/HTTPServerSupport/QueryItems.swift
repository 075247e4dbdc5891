import Foundation
import Hummingbird
import HummingbirdCore

extension URI {
    /// The query as `URLQueryItem`s, percent-decoded, in order.
    package var queryItems: [URLQueryItem] { Self.queryItems(in: query ?? "") }

    /// `name=value&…` text (a query, or a form body) as `URLQueryItem`s, percent-decoded, in order.
    package static func queryItems(in text: String) -> [URLQueryItem] {
        URLComponents(string: "http://host/?" + text)?.queryItems ?? []
    }
}
