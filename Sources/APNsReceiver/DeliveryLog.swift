import APNsWire
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
        do { try lines.append(Self.encode(push), sync: syncEachWrite) } catch { throw ReceiverError(.storage, error.message) }
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

    /// The payload is embedded as JSON: it was parsed as a JSON object before acceptance.
    static func encode(_ push: AcceptedPush) -> String {
        var out = "{\"time\":\"\(iso8601(push.receivedAt))\",\"environment\":\"\(push.environment.rawValue)\""
        out += ",\"apns-id\":\"\(push.apnsID)\""
        if let unique = push.apnsUniqueID { out += ",\"apns-unique-id\":\"\(unique)\"" }
        out += ",\"device-token\":\"\(push.deviceToken.hex)\",\"topic\":\(CompactJSON.string(push.topic))"
        out += ",\"push-type\":\(CompactJSON.string(push.pushType.rawValue)),\"priority\":\(push.priority.rawValue)"
        if let expiration = push.expiration { out += ",\"expiration\":\(expiration)" }
        if let collapse = push.collapseID { out += ",\"collapse-id\":\(CompactJSON.string(collapse))" }
        out += ",\"team-id\":\"\(push.teamID)\",\"key-id\":\"\(push.keyID)\""
        out += ",\"background\":\(push.isBackground),\"dropped\":\(push.dropped),\"payload-bytes\":\(push.payload.count)"
        // Valid JSON has no raw line breaks inside strings, so turning them into spaces keeps it one line.
        let oneLine = push.payload.map { $0 == 0x0A || $0 == 0x0D ? 0x20 : $0 }
        out += ",\"payload\":" + String(decoding: oneLine, as: UTF8.self) + "}\n"
        return out
    }

    /// `2026-11-22T01:02:03.456Z`, by hand: Foundation's ISO 8601 style costs more than the rest of a line.
    static func iso8601(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(milliseconds % 1000), 3))Z"
    }
}
