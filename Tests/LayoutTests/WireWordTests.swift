import Foundation
import Testing

/// The rules compare constants, never spellings (issue 64): no Identity Toolkit error code, wire
/// enum value (`"REAUTH"`, `"BLOCK"`, `"RECAPTCHA_ENTERPRISE"`, `"MISSING_EMAIL"`) or provider ID
/// (`"password"`, `"apple.com"`) is compared as a string outside the types that name them (`IdentityToolkitError.Code`'s constants, `WireValues.swift`,
/// `OobRequestType`, `ProviderID`). `IdentityToolkitError.Code` is not a string literal, so a code written as one does
/// not compile; this holds comparisons and made-up codes.
@Suite("Wire words are constants")
struct WireWordTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Sources").standardized

    /// Where such words are named, each once: the types themselves, and the SDK's own table of
    /// server messages (ServerErrors.swift), which maps their text as the SDK's does.
    static let namers: Set<String> = [
        "IdentityToolkitAPI/IdentityToolkitError.swift", "IdentityToolkitAPI/WireValues.swift", "FirebaseAuthCore/ServerErrors.swift",
    ]
    /// Comparisons to words of other protocols, each with why it stays text.
    static let otherProtocols: [String: String] = [
        #"header.alg == "RS256""#: "JOSE's alg (RFC 7518), checked strictly where a token is verified",
        #"header.alg == "ES256""#: "JOSE's alg (RFC 7518), checked strictly where a token is verified",
        #"jwk.kty == "RSA""#: "JOSE's key type (RFC 7517)",
        #"method == "POST""#: "HTTP's method, as Apple's server checks it",
        #"method == "HEAD""#: "HTTP's method: an answer to HEAD has no body (RFC 9112 §6.3)",
    ]

    @Test("no code or wire enum value is compared, or made, as a string outside the types that name it")
    func noSpelledWords() throws {
        // An upper-case wire word compared, switched on or made a code; a provider's ID compared or switched on.
        let providers = #"(password|phone|apple\.com|gc\.apple\.com|anonymous|custom|emailLink)"#
        let compared = try NSRegularExpression(pattern: #"[!=]= "[A-Z][A-Z0-9_]{2,}"|"[A-Z][A-Z0-9_]{2,}" [!=]=|case "[A-Z][A-Z0-9_]{2,}"|Code\(rawValue: "[A-Z]"#
                                                + #"|[!=]= ""# + providers + #"""# + #"|case ""# + providers + #"""#)
        var found: [String] = []
        var files = 0
        guard let walker = FileManager.default.enumerator(at: Self.sources, includingPropertiesForKeys: nil) else {
            Issue.record("cannot list \(Self.sources.path)")
            return
        }
        for case let url as URL in walker where url.pathExtension == "swift" {
            let path = String(url.path.dropFirst(Self.sources.path.count + 1))
            guard !path.contains("/Generated/"), !Self.namers.contains(path) else { continue }
            files += 1
            for (number, line) in try String(contentsOf: url, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let text = String(line)
                guard compared.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil,
                      !Self.otherProtocols.keys.contains(where: text.contains) else { continue }
                found.append("\(path):\(number + 1): \(text.trimmingCharacters(in: .whitespaces))")
            }
        }
        #expect(files > 200, "only \(files) source files: the walk broke")
        #expect(found.isEmpty, "words to make constants of:\n\(found.joined(separator: "\n"))")
    }
}
