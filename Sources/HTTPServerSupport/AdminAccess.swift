import Crypto
import Foundation
import NIOCore
import Utilities

/// Who may call the routes that read or change a deployment's state: the inspector and its API,
/// the backend's Admin routes and the Auth Emulator's own endpoints, the device gateway.
///
/// - Without a token the routes answer anyone, as the Firebase Auth Emulator does: the servers
///   then listen on loopback only (``forListening(on:token:ownerNetworks:)`` refuses any other
///   address), so only this machine's users reach them.
/// - With a token every such request carries it (`Authorization: Bearer <token>`, or the
///   inspector's session cookie made from it), compared in constant time. The Admin SDKs in
///   emulator mode always send `Bearer owner` and cannot be told otherwise: `owner` (and a Google
///   access token, `ya29.…`, which the emulator takes as the owner's) is taken only from a client
///   in one of `ownerNetworks`, the networks the operator names.
///
/// The rules only: no socket, no clock. The servers' middlewares ask ``decide(authorization:cookie:peer:ownerAllowed:)``.
package struct AdminAccess: Sendable {
    /// The deployment's token, or nil when only loopback listens.
    package let token: AdminToken?
    /// Where `Bearer owner` is taken from, when there is a token.
    package let ownerNetworks: [IPNetwork]

    /// No token: for servers on loopback.
    package static let loopbackOnly = AdminAccess(token: nil, ownerNetworks: [])

    package init(token: AdminToken?, ownerNetworks: [IPNetwork]) {
        self.token = token
        self.ownerNetworks = ownerNetworks
    }

    /// The access for servers listening on `hosts`: any address beyond loopback needs a token.
    /// - Throws: ``AdminAccessError`` `.tokenRequired` naming the first such host, `.ownerWithoutToken`
    ///   when owner networks are named with no token to go with them.
    package static func forListening(on hosts: [String], token: AdminToken?, ownerNetworks: [IPNetwork]) throws(AdminAccessError) -> AdminAccess {
        if token == nil {
            if let host = hosts.first(where: { !isLoopback($0) }) {
                throw AdminAccessError(.tokenRequired, "\(host) is beyond loopback, where anyone who reaches it could delete users, set faults and read SMS codes")
            }
            if !ownerNetworks.isEmpty {
                throw AdminAccessError(.ownerWithoutToken, "owner networks only matter with a token: without one, every client on loopback is taken")
            }
        }
        return AdminAccess(token: token, ownerNetworks: ownerNetworks)
    }

    /// Whether `host` (an address or a name to listen on) is loopback only: `localhost`, 127.0.0.0/8, `::1`.
    /// `0.0.0.0`, `::`, any other address and any other name are not.
    package static func isLoopback(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare.lowercased() == "localhost" { return true }
        guard let address = IPAddress(bare) else { return false }
        return IPNetwork.loopback.contains { $0.contains(address) }
    }

    /// What became of a request.
    package enum Decision: Equatable, Sendable {
        case allowed
        /// No credential: 401, saying how to give one.
        case missing
        /// A credential that is not taken here, and why (never echoing it).
        case refused(String)
    }

    /// Decides a request from its `Authorization` header, the inspector's session `cookie` value,
    /// and the client's address. `ownerAllowed`: whether this route takes the Admin SDKs' `owner`
    /// (the backend's Admin and emulator routes do; the inspector and the device gateway do not).
    package func decide(authorization: String?, cookie: String? = nil, peer: SocketAddress?, ownerAllowed: Bool) -> Decision {
        let bearer = authorization.flatMap(Self.bearer)
        guard let token else {
            // Loopback only: anyone here, as the emulator (the backend's Admin routes still ask
            // for a bearer token of their own, as the emulator's do).
            return .allowed
        }
        if let cookie, token.matchesSession(cookie) { return .allowed }
        guard let bearer else {
            return authorization == nil && cookie == nil ? .missing : .refused("the credential is not a bearer token")
        }
        if token.matches(bearer) { return .allowed }
        if bearer.lowercased() == "owner" || bearer.hasPrefix("ya29.") {
            guard ownerAllowed else { return .refused("`owner` is taken only by the backend's Admin and emulator routes") }
            guard let address = peer.flatMap(IPAddress.init(socketAddress:)) else {
                return .refused("`owner` is taken only from the networks given with --admin-owner-network, and the client's address is unknown")
            }
            guard ownerNetworks.contains(where: { $0.contains(address) }) else {
                return .refused("`owner` is taken only from the networks given with --admin-owner-network, and \(address) is in none"
                                + (ownerNetworks.isEmpty ? " (none is given)" : " of \(ownerNetworks.map(\.description).joined(separator: ", "))"))
            }
            return .allowed
        }
        return .refused("the bearer token is not this deployment's admin token")
    }

    /// The token of `Bearer <token>` (the scheme in any case), or nil.
    static func bearer(_ authorization: String) -> String? {
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return parts[1].trimmingCharacters(in: .whitespaces)
    }
}

/// A deployment's admin token. Only its digests are kept; it prints as `<admin token>`, so no log,
/// page or file written from a description shows it.
package struct AdminToken: Sendable, CustomStringConvertible {
    private let digest: [UInt8]
    /// The inspector's session cookie value: an HMAC of a fixed label under the token, so the
    /// browser keeps something that cannot be used as the token elsewhere.
    package let session: String

    /// The fewest characters a token has (`openssl rand -hex 32` gives 64).
    package static let minimumLength = 16

    /// - Throws: ``AdminAccessError`` `.weakToken` for a token under 16 characters or with
    ///   characters other than printable ASCII (a header could not carry it).
    package init(_ secret: String) throws(AdminAccessError) {
        guard secret.count >= Self.minimumLength else {
            throw AdminAccessError(.weakToken, "the admin token has \(secret.count) characters, fewer than \(Self.minimumLength) (make one with `openssl rand -hex 32`)")
        }
        guard secret.utf8.allSatisfy({ (0x21...0x7e).contains($0) }) else {
            throw AdminAccessError(.weakToken, "the admin token has a space or a character outside printable ASCII, which an Authorization header cannot carry")
        }
        digest = Array(SHA256.hash(data: Array(secret.utf8)))
        let mac = HMAC<SHA256>.authenticationCode(for: Array("authsim inspector session".utf8), using: SymmetricKey(data: Array(secret.utf8)))
        session = Base64URL.encode(Array(mac))
    }

    /// Whether `candidate` is the token, in time that does not depend on where they differ (both are hashed first, so not on the length either).
    package func matches(_ candidate: String) -> Bool {
        ConstantTime.equals(Array(SHA256.hash(data: Array(candidate.utf8))), digest)
    }

    /// Whether `cookie` is this token's session value, in constant time.
    package func matchesSession(_ cookie: String) -> Bool {
        ConstantTime.equals(Array(SHA256.hash(data: Array(cookie.utf8))), Array(SHA256.hash(data: Array(session.utf8))))
    }

    package var description: String { "<admin token>" }
}

/// Why an access set-up is refused.
package struct AdminAccessError: CodedError {
    package enum Code: String, Sendable { case tokenRequired, weakToken, ownerWithoutToken, badNetwork, unreadableToken }
    package let code: Code
    package let message: String
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

/// An IPv4 or IPv6 address as bytes (4 or 16).
package struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    package let bytes: [UInt8]

    /// Parses a literal (`10.0.0.1`, `::1`); an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`) is its IPv4 address.
    package init?(_ text: String) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self.init(raw: withUnsafeBytes(of: &v4) { Array($0) })
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            self.init(v6: withUnsafeBytes(of: &v6) { Array($0) })
        } else {
            return nil
        }
    }

    private init(raw: [UInt8]) { bytes = raw }

    init(v6: [UInt8]) {
        bytes = v6[0..<12].elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]) ? Array(v6[12...]) : v6
    }

    /// A connection's peer, or nil for a Unix socket.
    package init?(socketAddress: SocketAddress) {
        switch socketAddress {
        case .v4(let address):
            var raw = address.address.sin_addr
            self.init(raw: withUnsafeBytes(of: &raw) { Array($0) })
        case .v6(let address):
            var raw = address.address.sin6_addr
            self.init(v6: withUnsafeBytes(of: &raw) { Array($0) })
        case .unixDomainSocket:
            return nil
        }
    }

    package var description: String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        var raw = in6_addr()
        withUnsafeMutableBytes(of: &raw) { $0.copyBytes(from: bytes) }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        return inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count)) != nil ? String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
    }
}

/// A network in CIDR notation (`10.0.0.0/8`, `fd00::/8`; a bare address is the one address).
package struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    package let address: IPAddress
    package let prefixLength: Int

    /// 127.0.0.0/8 and ::1.
    package static let loopback = [IPNetwork(address: IPAddress("127.0.0.0")!, prefixLength: 8), IPNetwork(address: IPAddress("::1")!, prefixLength: 128)]

    init(address: IPAddress, prefixLength: Int) {
        self.address = address
        self.prefixLength = prefixLength
    }

    /// - Throws: ``AdminAccessError`` `.badNetwork` saying what is wrong.
    package init(_ text: String) throws(AdminAccessError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count <= 2, let address = IPAddress(parts[0]) else {
            throw AdminAccessError(.badNetwork, "\(text) is not a network: an address with a prefix length, e.g. 10.0.0.0/8 or fd00::/8")
        }
        let bits = address.bytes.count * 8
        let length = parts.count == 2 ? Int(parts[1]) : bits
        guard let length, (0...bits).contains(length) else {
            throw AdminAccessError(.badNetwork, "\(text): the prefix length of an \(bits == 32 ? "IPv4" : "IPv6") network is 0 to \(bits)")
        }
        self.init(address: address, prefixLength: length)
    }

    package func contains(_ other: IPAddress) -> Bool {
        guard other.bytes.count == address.bytes.count else { return false }
        var remaining = prefixLength
        for (mine, theirs) in zip(address.bytes, other.bytes) where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xff : ~(0xff >> UInt8(remaining))
            guard mine & mask == theirs & mask else { return false }
            remaining -= 8
        }
        return true
    }

    package var description: String { "\(address)/\(prefixLength)" }
}

extension AdminAccess {
    /// Refuses to serve admin routes beyond loopback without a token (what a server's `start`
    /// checks, so a library user cannot open one to the network by mistake either).
    package func check(listening host: String, what: String) throws(ServerStartError) {
        guard token == nil, !Self.isLoopback(host) else { return }
        throw ServerStartError(message: "\(what) will not listen on \(host) without an admin token: beyond loopback anyone could use its admin routes (give AdminAccess a token, or listen on 127.0.0.1)")
    }
}
