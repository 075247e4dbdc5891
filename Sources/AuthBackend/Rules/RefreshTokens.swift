import Crypto
import Foundation
import IdentityToolkitAPI
import Utilities

/// Refresh tokens that carry their sign-in, sealed (HMAC-SHA256) rather than kept: a sign-in
/// leaves nothing behind but the user's `lastLoginAt`, so the state does not grow with sign-ins.
/// Revocation is the user's `validSince`, as Google's (`revokeRefreshTokens`); a deleted user's
/// tokens find no user (USER_NOT_FOUND), and a user made again with the same UID (`--id-seed`)
/// is another user (its `createdAt` differs).
///
/// The key is derived from the ID-token signing key, so every backend that signs with one key (a
/// fleet's nodes, a state folder across restarts) takes the others' tokens.
struct RefreshTokenSeal: Sendable {
    /// What a refresh token says: the sign-in it continues.
    struct Sign: Codable, Hashable {
        /// The user and when it was made (ms): a new user with the same UID is not this one.
        var u: String
        var k: Int64
        /// The sign-in provider, the second factor's enrollment ID, the sign-in's time (ms), a custom token's claims (JSON text).
        var p: String
        var f: String?
        var i: Int64
        var c: String?
        /// The user's tenant (absent: the project's own users).
        var t: String?
    }

    private let key: SymmetricKey

    init(signingKeyDER: [UInt8]) {
        key = SymmetricKey(data: HMAC<SHA256>.authenticationCode(for: Array("authsim refresh tokens v1".utf8), using: SymmetricKey(data: signingKeyDER)))
    }

    /// A token for this sign-in: `AMf-v` (Google's tokens' prefix), the sign-in as JSON, its MAC.
    func seal(localId: String, userCreatedAt: Date, provider: ProviderID, secondFactor: String?, issuedAt: Date, claims: String?,
              tenant: String?) -> String {
        // The sign-in's time truncated, as the ID token's auth_time is (whole seconds, truncated):
        // rounded, a sign-in in the last half millisecond of a second came back a second later in
        // every refreshed token's auth_time, and in the revocation check against validSince.
        let sign = Sign(u: localId, k: Self.milliseconds(userCreatedAt), p: provider.rawValue, f: secondFactor, i: Self.truncatedMilliseconds(issuedAt), c: claims,
                        t: tenant)
        // A struct of strings and integers always encodes.
        let body = (try? IdentityToolkitJSON.encode(sign)) ?? []
        let mac = HMAC<SHA256>.authenticationCode(for: body, using: key)
        return "AMf-v" + Base64URL.encode(body) + "." + Base64URL.encode(Array(mac))
    }

    /// The sign-in a token carries, or nil for one this key did not seal (a forgery, another
    /// project's, a token from before tokens were sealed).
    func open(_ token: String) -> Sign? {
        guard token.hasPrefix("AMf-v") else { return nil }
        let parts = token.dropFirst(5).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let body = Base64URL.decode(parts[0]), let mac = Base64URL.decode(parts[1]),
              HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: body, using: key)
        else { return nil }
        return try? JSONDecoder().decode(Sign.self, from: Data(body))
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
    static func truncatedMilliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }
}
