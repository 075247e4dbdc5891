import Glibc

/// The address a client dials for a server, which is not always the address it listens on: a
/// server on `0.0.0.0` (every IPv4 address) or `::` is reached at `127.0.0.1` (or `::1`) from this
/// machine and at one of its interfaces' addresses from others; no client can dial `0.0.0.0`.
package enum DialAddress {
    /// Whether `host` is an unspecified address: listening on every interface.
    package static func isEveryAddress(_ host: String) -> Bool {
        ["0.0.0.0", "::", "[::]", "0:0:0:0:0:0:0:0"].contains(host)
    }

    /// What a client on this machine dials for a server listening on `host`: the loopback address
    /// of the same family for an unspecified one, `host` itself otherwise.
    package static func local(for host: String) -> String {
        guard isEveryAddress(host) else { return host }
        return host.contains(":") ? "::1" : "127.0.0.1"
    }

    /// `host:port` as a client on this machine dials a server listening on `host` and `port`
    /// (``local(for:)``, as a URL's authority).
    package static func localAuthority(_ host: String, port: Int) -> String {
        authority(local(for: host), port: port)
    }

    /// `host:port` as a URL's authority: an IPv6 address in brackets.
    package static func authority(_ host: String, port: Int) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// This machine's addresses other machines can dial (IPv4, up interfaces, loopback left out),
    /// from getifaddrs(3); empty when it has none.
    package static func external() -> [String] {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0, let first else { return [] }
        defer { freeifaddrs(first) }
        var addresses: [String] = []
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            let flags = Int32(entry.pointee.ifa_flags)
            guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                  flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0 else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ipv4 in
                var raw = ipv4.pointee.sin_addr
                _ = inet_ntop(AF_INET, &raw, &text, socklen_t(INET_ADDRSTRLEN))
            }
            let dotted = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if !addresses.contains(dotted) { addresses.append(dotted) }
        }
        return addresses
    }

    /// A banner's line for a server listening on every address: which address other machines use
    /// in place of the local one shown; `nil` for any other `host`.
    package static func everyAddressNote(_ host: String) -> String? {
        guard isEveryAddress(host) else { return nil }
        let others = external()
        let local = local(for: host)
        guard !others.isEmpty else { return "listening on every address (\(host)): this machine has no other address than \(local) up now" }
        return "listening on every address (\(host)): from other machines use \(others.joined(separator: " or ")) in place of \(local)"
    }
}
