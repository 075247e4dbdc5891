import Crypto
import Foundation

/// Time-based one-time passwords as a TOTP second factor's (RFC 6238 over RFC 4226's HOTP): an
/// HMAC-SHA1 of the 30-second step since 1970, six digits, the secret shared as Base32 (RFC 4648,
/// no padding), as Google's TOTP second factors hand it to the SDK (`hashingAlgorithm` SHA1,
/// `verificationCodeLength` 6, `periodSec` 30) and as authenticator apps compute it from the QR
/// code's `otpauth://` URL. A value with no clock: the instant is the caller's.
package enum TOTPCodes {
    static let digits = 6
    static let period: Int64 = 30
    static let algorithm = "SHA1"

    /// The time step of `instant`.
    static func step(_ instant: Date) -> Int64 {
        Int64((instant.timeIntervalSince1970 / Double(period)).rounded(.down))
    }

    /// The code of `secret` for time step `step`.
    static func code(secret: [UInt8], step: Int64) -> String {
        let counter = withUnsafeBytes(of: UInt64(bitPattern: step).bigEndian) { Array($0) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: counter, using: SymmetricKey(data: secret)))
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let value = (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        let text = String(value % 1_000_000)
        return String(repeating: "0", count: digits - text.count) + text
    }

    /// What an authenticator app shows at `instant` for the secret of an `otpauth://totp/…` URL
    /// (the QR code's), `stepsAhead` steps later; nil for a URL without a Base32 `secret`.
    package static func authenticatorCode(otpauthURL: String, at instant: Date, stepsAhead: Int = 0) -> String? {
        guard let components = URLComponents(string: otpauthURL), components.scheme == "otpauth",
              let text = components.queryItems?.first(where: { $0.name == "secret" })?.value, let secret = bytes(base32: text), !secret.isEmpty
        else { return nil }
        return code(secret: secret, step: step(instant) + Int64(stepsAhead))
    }

    /// The time step whose code `code` is at `instant`, within `adjacentIntervals` steps either
    /// side (the project's tolerance for clocks that differ), and after `usedStep` (a code already
    /// spent, or an earlier one, does not sign in again); nil when none is. Compared in constant
    /// time.
    static func matchingStep(_ code: String, secret: [UInt8], at instant: Date, adjacentIntervals: Int, after usedStep: Int64?) -> Int64? {
        guard code.utf8.count == digits, code.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        let now = step(instant)
        var found: Int64?
        for candidate in (now - Int64(adjacentIntervals))...(now + Int64(adjacentIntervals)) where candidate > (usedStep ?? .min) {
            if constantTimeEqual(Array(self.code(secret: secret, step: candidate).utf8), Array(code.utf8)), found == nil { found = candidate }
        }
        return found
    }

    private static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// `bytes` in Base32 (RFC 4648), upper case, without padding.
    static func base32(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                out.append(alphabet[Int((buffer >> UInt32(bits - 5)) & 31)])
                bits -= 5
            }
        }
        if bits > 0 { out.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of Base32 text (any case, padding ignored); nil for a character outside the alphabet.
    static func bytes(base32 text: String) -> [UInt8]? {
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for character in text.uppercased().utf8 where character != UInt8(ascii: "=") {
            guard let value = alphabet.firstIndex(of: character) else { return nil }
            buffer = (buffer << 5) | UInt32(value)
            bits += 5
            if bits >= 8 {
                out.append(UInt8((buffer >> UInt32(bits - 8)) & 0xff))
                bits -= 8
            }
        }
        return out
    }
}
