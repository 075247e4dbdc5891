import HTTPServerSupport
import Testing

/// What a banner tells clients to dial for a server's listening address.
@Suite("The address a client dials")
struct DialAddressTests {
    @Test("every address (0.0.0.0, ::) is dialled at the loopback of its family here; any other host as given; IPv6 in brackets",
          arguments: [("0.0.0.0", "127.0.0.1", "127.0.0.1:9099"), ("::", "::1", "[::1]:9099"), ("127.0.0.1", "127.0.0.1", "127.0.0.1:9099"),
                      ("10.1.2.3", "10.1.2.3", "10.1.2.3:9099"), ("fd00::5", "fd00::5", "[fd00::5]:9099"), ("auth.internal", "auth.internal", "auth.internal:9099")])
    func local(listening: String, dialled: String, authority: String) {
        #expect(DialAddress.local(for: listening) == dialled)
        #expect(DialAddress.authority(DialAddress.local(for: listening), port: 9099) == authority)
        #expect((DialAddress.everyAddressNote(listening) != nil) == DialAddress.isEveryAddress(listening))
    }

    @Test("this machine's other addresses: IPv4, none of them loopback, none twice")
    func external() {
        let addresses = DialAddress.external()
        #expect(Set(addresses).count == addresses.count)
        for address in addresses {
            #expect(!address.hasPrefix("127.") && address.split(separator: ".").count == 4, "\(address)")
        }
    }
}
