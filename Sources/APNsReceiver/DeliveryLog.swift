import APNsWire
import Utilities
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A push the receiver answered 200: what the delivery log records and what the device gets.
public struct AcceptedPush: Sendable, Hashable {
    public var receivedAt: Date
    public var environment: APNsEnvironment
    public var apnsID: String
    public var apnsUniqueID: String?
    public var deviceToken: DeviceToken
    public var topic: String
    public var bundleID: String
    public var pushType: APNsPushType
    public var priority: APNsPriority
    public var expiration: Int?
    public var collapseID: String?
    public var teamID: String
    public var keyID: String
    /// The payload exactly as received (valid JSON: it was parsed before acceptance).
    public var payload: [UInt8]
    /// `aps` held only `content-available: 1`.
    public var isBackground: Bool
    /// A fault told the receiver to answer 200 and never deliver.
    public var dropped: Bool
}

/// The durable delivery log: one JSON line per push answered 200, written (with `write(2)`, so it
/// survives the receiver being killed) before the answer is sent.
///
/// Nothing is held in memory: ``entries(in:)`` reads the file.
public final class DeliveryLog: Sendable {
    public var file: URL { lines.file }
    private let lines: AppendOnlyFile
    /// Also `fsync` after each line (survives a machine crash; much slower).
    public let syncEachWrite: Bool

    /// Opens (creating) `file` for appending.
    public init(file: URL, syncEachWrite: Bool = false) throws(ReceiverError) {
        do { lines = try AppendOnlyFile(file: file, what: "the delivery log") } catch { throw ReceiverError(.storage, error.message) }
        self.syncEachWrite = syncEachWrite
    }

    /// Appends one push. Returns only once the line is in the file (the kernel has it).
    public func append(_ push: AcceptedPush) throws(ReceiverError) {
        var line: [UInt8] = []
        Self.encode(push, into: &line)
        try append(lines: line)
    }

    /// Appends lines made by ``encode(_:into:)``, with one `write(2)`.
    func append(lines: [UInt8]) throws(ReceiverError) {
        do { try self.lines.append(lines, sync: syncEachWrite) } catch { throw ReceiverError(.storage, error.message) }
    }

    /// One log line.
    public struct Entry: Codable, Sendable, Hashable {
        public var time: String
        public var environment: APNsEnvironment
        public var apnsID: String
        public var apnsUniqueID: String?
        public var deviceToken: String
        public var topic: String
        public var pushType: String
        public var priority: Int
        public var expiration: Int?
        public var collapseID: String?
        public var teamID: String
        public var keyID: String
        public var background: Bool
        public var dropped: Bool
        public var payloadBytes: Int
        enum CodingKeys: String, CodingKey {
            case time, environment, apnsID = "apns-id", apnsUniqueID = "apns-unique-id", deviceToken = "device-token"
            case topic, pushType = "push-type", priority, expiration, collapseID = "collapse-id", teamID = "team-id"
            case keyID = "key-id", background, dropped, payloadBytes = "payload-bytes"
        }
    }

    /// Reads a delivery log. A torn last line (a write cut by a kill) is skipped.
    public static func entries(in file: URL) throws(ReceiverError) -> [Entry] {
        let data: Data
        do { data = try Data(contentsOf: file) } catch {
            throw ReceiverError(.storage, "cannot read \(file.path): \(error.localizedDescription)")
        }
        let decoder = JSONDecoder()
        return data.split(separator: UInt8(ascii: "\n")).compactMap { try? decoder.decode(Entry.self, from: Data($0)) }
    }

    /// One line, appended to `out` (see ``LineEncoder``).
    static func encode(_ push: AcceptedPush, into out: inout [UInt8]) {
        var encoder = LineEncoder()
        encoder.encode(push, into: &out)
    }

    /// Writes log lines. Keeps the time's text up to the second from one line to the next (a
    /// connection logs many pushes a second): only the milliseconds are written anew.
    struct LineEncoder {
        private var second = Int64.min
        /// `2026-11-22T01:02:03.` for ``second``.
        private var secondText: [UInt8] = []

        /// One line. The payload is embedded as JSON: it was parsed as a JSON object before
        /// acceptance. Built byte by byte: string interpolation cost more than the write.
        mutating func encode(_ push: AcceptedPush, into out: inout [UInt8]) {
            out.reserveCapacity(out.count + 400 + push.payload.count)
            func raw(_ text: StaticString) { out.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)) }
            func ascii(_ text: String) { out.append(contentsOf: text.utf8) }
            raw("{\"time\":\"")
            let milliseconds = Int64((push.receivedAt.timeIntervalSince1970 * 1000).rounded(.down))
            let (second, millisecond) = milliseconds.quotientAndRemainder(dividingBy: 1000)
            if second != self.second {
                self.second = second
                secondText.removeAll(keepingCapacity: true)
                DeliveryLog.iso8601(second: second, into: &secondText)
            }
            out.append(contentsOf: secondText)
            DeliveryLog.digits(Int32(millisecond), 3, into: &out)
            raw("Z\",\"environment\":\"")
            ascii(push.environment.rawValue)
            raw("\",\"apns-id\":\"")
            ascii(push.apnsID)
            if let unique = push.apnsUniqueID {
                raw("\",\"apns-unique-id\":\"")
                ascii(unique)
            }
            raw("\",\"device-token\":\"")
            ascii(push.deviceToken.hex)
            raw("\",\"topic\":")
            CompactJSON.appendString(push.topic, to: &out)
            raw(",\"push-type\":")
            CompactJSON.appendString(push.pushType.rawValue, to: &out)
            raw(",\"priority\":")
            DeliveryLog.decimal(push.priority.rawValue, into: &out)
            if let expiration = push.expiration {
                raw(",\"expiration\":")
                DeliveryLog.decimal(expiration, into: &out)
            }
            if let collapse = push.collapseID {
                raw(",\"collapse-id\":")
                CompactJSON.appendString(collapse, to: &out)
            }
            raw(",\"team-id\":")
            CompactJSON.appendString(push.teamID, to: &out)
            raw(",\"key-id\":")
            CompactJSON.appendString(push.keyID, to: &out)
            push.isBackground ? raw(",\"background\":true") : raw(",\"background\":false")
            push.dropped ? raw(",\"dropped\":true") : raw(",\"dropped\":false")
            raw(",\"payload-bytes\":")
            DeliveryLog.decimal(push.payload.count, into: &out)
            raw(",\"payload\":")
            // Valid JSON has no raw line breaks inside strings, so turning them into spaces keeps it one line.
            if push.payload.contains(where: { $0 == 0x0A || $0 == 0x0D }) {
                for byte in push.payload { out.append(byte == 0x0A || byte == 0x0D ? 0x20 : byte) }
            } else {
                out.append(contentsOf: push.payload)
            }
            raw("}\n")
        }
    }

    /// A whole number in decimal, without making a String.
    static func decimal(_ value: Int, into out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var divisor: UInt = 1
        while divisor <= magnitude / 10 { divisor *= 10 }
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(magnitude / divisor))
            magnitude %= divisor
            divisor /= 10
        }
    }

    /// `value` in `width` decimal digits, zero-padded.
    static func digits(_ value: Int32, _ width: Int, into out: inout [UInt8]) {
        var divisor: Int32 = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: (rest / divisor) % 10))
            rest %= divisor
            divisor /= 10
        }
    }

    /// `2026-11-22T01:02:03.`, by hand: Foundation's ISO 8601 style costs more than the rest of a line.
    static func iso8601(second: Int64, into out: inout [UInt8]) {
        var seconds = time_t(second)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        digits(parts.tm_year + 1900, 4, into: &out); out.append(UInt8(ascii: "-"))
        digits(parts.tm_mon + 1, 2, into: &out); out.append(UInt8(ascii: "-"))
        digits(parts.tm_mday, 2, into: &out); out.append(UInt8(ascii: "T"))
        digits(parts.tm_hour, 2, into: &out); out.append(UInt8(ascii: ":"))
        digits(parts.tm_min, 2, into: &out); out.append(UInt8(ascii: ":"))
        digits(parts.tm_sec, 2, into: &out); out.append(UInt8(ascii: "."))
    }
}
