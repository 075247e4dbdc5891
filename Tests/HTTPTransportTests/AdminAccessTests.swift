import Foundation
import HTTPServerSupport
import NIOCore
import Testing

/// ``AdminAccess``'s rules without a server: which hosts are loopback, networks, tokens, and the
/// decision for every kind of credential (docs/security.md, "Shared deployments").
@Suite("Admin access: the token, the owner networks, loopback")
struct AdminAccessTests {
    static let secret = "0123456789abcdef0123456789abcdef"

    func ip(_ text: String) -> IPAddress { IPAddress(text)! }

    @Test("loopback is localhost, 127.0.0.0/8 and ::1; 0.0.0.0, ::, other addresses and names are not")
    func loopback() {
        for host in ["127.0.0.1", "127.1.2.3", "localhost", "LOCALHOST", "::1", "[::1]", "::ffff:127.0.0.1"] {
            #expect(AdminAccess.isLoopback(host), "\(host)")
        }
        for host in ["0.0.0.0", "::", "10.0.0.1", "192.168.1.5", "fe80::1", "example.com", "", "128.0.0.1"] {
            #expect(!AdminAccess.isLoopback(host), "\(host)")
        }
    }

    @Test("beyond loopback without a token is refused; owner networks without a token too")
    func listening() throws {
        #expect(throws: AdminAccessError(.tokenRequired, "")) { try AdminAccess.forListening(on: ["0.0.0.0"], token: nil, ownerNetworks: []) }
        #expect(throws: AdminAccessError(.tokenRequired, "")) { try AdminAccess.forListening(on: ["127.0.0.1", "10.1.2.3"], token: nil, ownerNetworks: []) }
        #expect(throws: AdminAccessError(.ownerWithoutToken, "")) {
            try AdminAccess.forListening(on: ["127.0.0.1"], token: nil, ownerNetworks: [try IPNetwork("10.0.0.0/8")])
        }
        #expect(try AdminAccess.forListening(on: ["127.0.0.1"], token: nil, ownerNetworks: []).token == nil)
        #expect(try AdminAccess.forListening(on: ["0.0.0.0"], token: try AdminToken(Self.secret), ownerNetworks: []).token != nil)
        // The servers' own start refuses the same (a library user cannot open one by mistake).
        #expect(throws: ServerStartError.self) { try AdminAccess.loopbackOnly.check(listening: "0.0.0.0", what: "the backend") }
        try AdminAccess.loopbackOnly.check(listening: "127.0.0.1", what: "the backend")
    }

    @Test("a token has 16 printable ASCII characters or more, and prints as <admin token>")
    func tokens() throws {
        #expect(throws: AdminAccessError(.weakToken, "")) { try AdminToken("short") }
        #expect(throws: AdminAccessError(.weakToken, "")) { try AdminToken("0123456789abcdef 0123") }
        #expect(throws: AdminAccessError(.weakToken, "")) { try AdminToken("0123456789abcdéf0123") }
        let token = try AdminToken(Self.secret)
        #expect(token.matches(Self.secret))
        #expect(!token.matches(Self.secret + "0"))
        #expect(!token.matches(String(Self.secret.dropLast())))
        #expect(!token.matches(""))
        #expect("\(token)" == "<admin token>" && String(reflecting: token).contains(Self.secret) == false)
        // The session cookie is not the token, and the token is not a session.
        #expect(token.session != Self.secret && token.matchesSession(token.session) && !token.matchesSession(Self.secret))
        #expect(try AdminToken(Self.secret + "x").session != token.session)
    }

    @Test("networks: IPv4, IPv6, a bare address, IPv4-mapped peers; bad text is refused")
    func networks() throws {
        let ten = try IPNetwork("10.0.0.0/8")
        #expect(ten.contains(ip("10.200.3.4")))
        #expect(!ten.contains(ip("11.0.0.1")))
        #expect(ten.contains(ip("::ffff:10.1.1.1")), "an IPv4 client of a dual-stack listener")
        let odd = try IPNetwork("172.16.0.0/12")
        #expect(odd.contains(ip("172.31.255.255")) && !odd.contains(ip("172.32.0.0")))
        let six = try IPNetwork("fd00::/8")
        #expect(six.contains(ip("fd12:3456::1")) && !six.contains(ip("fe80::1")))
        #expect(!six.contains(ip("10.0.0.1")))
        let one = try IPNetwork("192.168.1.5")
        #expect(one.prefixLength == 32 && one.contains(ip("192.168.1.5")) && !one.contains(ip("192.168.1.6")))
        #expect(try IPNetwork("0.0.0.0/0").contains(ip("8.8.8.8")))
        for bad in ["10.0.0.0/33", "fd00::/129", "10.0.0/8", "ten", "10.0.0.0/x", "10.0.0.0/8/8", ""] {
            #expect(throws: AdminAccessError(.badNetwork, ""), "\(bad)") { try IPNetwork(bad) }
        }
        #expect(IPAddress(socketAddress: try SocketAddress(ipAddress: "10.1.2.3", port: 1))?.description == "10.1.2.3")
        #expect(IPAddress(socketAddress: try SocketAddress(ipAddress: "fd00::2", port: 1))?.description == "fd00::2")
    }

    @Test("decisions: the token as a bearer or a session cookie; owner only from the owner networks and where owner is taken")
    func decisions() throws {
        let access = AdminAccess(token: try AdminToken(Self.secret), ownerNetworks: [try IPNetwork("10.0.0.0/8")])
        let inside = try SocketAddress(ipAddress: "10.9.9.9", port: 50_000)
        let outside = try SocketAddress(ipAddress: "192.168.0.9", port: 50_000)
        #expect(access.decide(authorization: "Bearer \(Self.secret)", peer: outside, ownerAllowed: false) == .allowed)
        #expect(access.decide(authorization: "bearer \(Self.secret)", peer: nil, ownerAllowed: false) == .allowed)
        #expect(access.decide(authorization: nil, cookie: access.token!.session, peer: outside, ownerAllowed: false) == .allowed)
        #expect(access.decide(authorization: nil, peer: outside, ownerAllowed: true) == .missing)
        func refused(_ decision: AdminAccess.Decision) -> String? { if case .refused(let why) = decision { why } else { nil } }
        let wrong = refused(access.decide(authorization: "Bearer \(Self.secret)0", peer: inside, ownerAllowed: true))
        #expect(wrong != nil && wrong?.contains(Self.secret) == false, "a refusal never echoes a token")
        #expect(refused(access.decide(authorization: "Basic abc", peer: inside, ownerAllowed: true)) != nil)
        #expect(refused(access.decide(authorization: nil, cookie: "forged", peer: inside, ownerAllowed: true)) != nil)
        #expect(refused(access.decide(authorization: nil, cookie: Self.secret, peer: inside, ownerAllowed: true)) != nil, "the token is not a cookie")
        // The Admin SDKs' owner: from 10/8, where taken.
        #expect(access.decide(authorization: "Bearer owner", peer: inside, ownerAllowed: true) == .allowed)
        #expect(access.decide(authorization: "Bearer ya29.a0AfH6", peer: inside, ownerAllowed: true) == .allowed)
        #expect(refused(access.decide(authorization: "Bearer owner", peer: outside, ownerAllowed: true))?.contains("192.168.0.9") == true)
        #expect(refused(access.decide(authorization: "Bearer owner", peer: inside, ownerAllowed: false)) != nil, "the inspector takes no owner")
        #expect(refused(access.decide(authorization: "Bearer owner", peer: nil, ownerAllowed: true)) != nil)
        // Without owner networks, owner is never taken.
        let tokenOnly = AdminAccess(token: try AdminToken(Self.secret), ownerNetworks: [])
        #expect(refused(tokenOnly.decide(authorization: "Bearer owner", peer: inside, ownerAllowed: true))?.contains("none is given") == true)
        // Loopback only, no token: anyone (the emulator's way).
        #expect(AdminAccess.loopbackOnly.decide(authorization: nil, peer: outside, ownerAllowed: false) == .allowed)
    }
}
