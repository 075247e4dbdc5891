import APNsWire
import Utilities
import Foundation
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A push the receiver answered 200: what the delivery log records and what the device gets.
///
/// A value whose fields sit behind one reference: a push goes into its answer, the hand-off to
/// the device side, the device hub's recent list and an observer's event, and copying sixteen
/// fields, ten of them reference-counted, was more than half of the receiver's calls into the
/// Swift runtime per push with its device gateway. The fields are constants of the box, read without an
/// exclusivity check; setting one (rare: tests, a fault's `dropped`) makes a new box.
package struct AcceptedPush: Sendable, Hashable {
    package var receivedAt: Date {
        get { box.fields.receivedAt }
        set { box = Box(box.fields, changing: { $0.receivedAt = newValue }) }
    }
    package var environment: APNsEnvironment {
        get { box.fields.environment }
        set { box = Box(box.fields, changing: { $0.environment = newValue }) }
    }
    package var apnsID: String {
        get { box.fields.apnsID }
        set { box = Box(box.fields, changing: { $0.apnsID = newValue }) }
    }
    package var apnsUniqueID: String? {
        get { box.fields.apnsUniqueID }
        set { box = Box(box.fields, changing: { $0.apnsUniqueID = newValue }) }
    }
    package var deviceToken: DeviceToken {
        get { box.fields.deviceToken }
        set { box = Box(box.fields, changing: { $0.deviceToken = newValue }) }
    }
    /// The device tokens `pushes` name, each once, sorted (a fleet's batch row's). Neighbouring
    /// pushes mostly share a token: only one that differs from the push before goes into the set,
    /// compared where it is (each push's token copied and hashed cost 4 retains a push).
    package static func deviceTokens(of pushes: [AcceptedPush]) -> [String] {
        var seen = Set<String>()
        for index in pushes.indices where index == 0 || pushes[index].box.fields.deviceToken != pushes[index - 1].box.fields.deviceToken {
            seen.insert(pushes[index].box.fields.deviceToken.hex)
        }
        return seen.sorted()
    }
    package var topic: String {
        get { box.fields.topic }
        set { box = Box(box.fields, changing: { $0.topic = newValue }) }
    }
    package var bundleID: String {
        get { box.fields.bundleID }
        set { box = Box(box.fields, changing: { $0.bundleID = newValue }) }
    }
    package var pushType: APNsPushType {
        get { box.fields.pushType }
        set { box = Box(box.fields, changing: { $0.pushType = newValue }) }
    }
    package var priority: APNsPriority {
        get { box.fields.priority }
        set { box = Box(box.fields, changing: { $0.priority = newValue }) }
    }
    package var expiration: Int? {
        get { box.fields.expiration }
        set { box = Box(box.fields, changing: { $0.expiration = newValue }) }
    }
    package var collapseID: String? {
        get { box.fields.collapseID }
        set { box = Box(box.fields, changing: { $0.collapseID = newValue }) }
    }
    package var teamID: String {
        get { box.fields.teamID }
        set { box = Box(box.fields, changing: { $0.teamID = newValue }) }
    }
    package var keyID: String {
        get { box.fields.keyID }
        set { box = Box(box.fields, changing: { $0.keyID = newValue }) }
    }
    /// The payload exactly as received (valid JSON: it was parsed before acceptance).
    package var payload: [UInt8] {
        get { box.fields.payload }
        set { box = Box(box.fields, changing: { $0.payload = newValue }) }
    }
    /// `aps` held only `content-available: 1`.
    package var isBackground: Bool {
        get { box.fields.isBackground }
        set { box = Box(box.fields, changing: { $0.isBackground = newValue }) }
    }
    /// A fault told the receiver to answer 200 and never deliver.
    package var dropped: Bool {
        get { box.fields.dropped }
        set { box = Box(box.fields, changing: { $0.dropped = newValue }) }
    }

    private struct Fields: Hashable, Sendable {
        var receivedAt: Date
        var environment: APNsEnvironment
        var apnsID: String
        var apnsUniqueID: String?
        var deviceToken: DeviceToken
        var topic: String
        var bundleID: String
        var pushType: APNsPushType
        var priority: APNsPriority
        var expiration: Int?
        var collapseID: String?
        var teamID: String
        var keyID: String
        var payload: [UInt8]
        var isBackground: Bool
        var dropped: Bool
    }

    private final class Box: Sendable {
        let fields: Fields
        init(_ fields: Fields) { self.fields = fields }
        convenience init(_ fields: Fields, changing change: (inout Fields) -> Void) {
            var changed = fields
            change(&changed)
            self.init(changed)
        }
    }

    private var box: Box

    package init(receivedAt: Date, environment: APNsEnvironment, apnsID: String,
         apnsUniqueID: String? = nil, deviceToken: DeviceToken, topic: String,
         bundleID: String, pushType: APNsPushType, priority: APNsPriority, expiration: Int? = nil, collapseID: String? = nil,
         teamID: String, keyID: String, payload: [UInt8], isBackground: Bool, dropped: Bool) {
        box = Box(Fields(receivedAt: receivedAt, environment: environment, apnsID: apnsID,
                          apnsUniqueID: apnsUniqueID, deviceToken: deviceToken, topic: topic,
                          bundleID: bundleID, pushType: pushType, priority: priority, expiration: expiration, collapseID: collapseID,
                          teamID: teamID, keyID: keyID, payload: payload, isBackground: isBackground, dropped: dropped))
    }

    package static func == (lhs: AcceptedPush, rhs: AcceptedPush) -> Bool {
        lhs.box === rhs.box || lhs.box.fields == rhs.box.fields
    }

    package func hash(into hasher: inout Hasher) { box.fields.hash(into: &hasher) }
}

/// The durable delivery log: one JSON line per push answered 200, written (with `write(2)`, so it
/// survives the receiver being killed) before the answer is sent.
///
/// Nothing is held in memory: ``entries(in:)`` reads the file.
package final class DeliveryLog: Sendable {
    package var file: URL { lines.file }
    private let lines: AppendOnlyFile
    /// Also `fsync` after each line (survives a machine crash; much slower).
    package let syncEachWrite: Bool

    /// The log's format: 1 without a stamp, 2 with one (the lines are the same).
    package static let format = StateFormat(kind: "delivery log", current: 2)

    /// Opens (creating) `file` for appending: a new file starts with its stamp, an older one is
    /// migrated, a newer one refused (``AppendOnlyFile/init(file:what:mode:format:upgrade:)``).
    package init(file: URL, syncEachWrite: Bool = false) throws(ReceiverError) {
        do { lines = try AppendOnlyFile(file: file, what: "the delivery log", format: Self.format) } catch { throw ReceiverError(error) }
        self.syncEachWrite = syncEachWrite
    }

    /// Appends one push. Returns only once the line is in the file (the kernel has it).
    package func append(_ push: AcceptedPush) throws(ReceiverError) {
        var line: [UInt8] = []
        Self.encode(push, into: &line)
        try append(lines: line)
    }

    /// Appends lines made by ``encode(_:into:)``, with one `write(2)`.
    /// - Returns: where in the file they begin (``read(at:count:)``).
    @discardableResult
    func append(lines: [UInt8]) throws(ReceiverError) -> AppendOnlyFile.Location {
        do { return try self.lines.appendLocating(lines, sync: syncEachWrite) } catch { throw ReceiverError(.storage, error.message) }
    }

    /// Lines this log appended, read back: `count` bytes at `location` (`nil` once the file no
    /// longer holds them: emptied by `push-receiver reset` since).
    func read(at location: AppendOnlyFile.Location, count: Int) -> [UInt8]? { lines.read(at: location, count: count) }

    /// One log line.
    package struct Entry: Codable, Sendable, Hashable {
        package var time: String
        package var environment: APNsEnvironment
        package var apnsID: String
        package var apnsUniqueID: String?
        package var deviceToken: String
        package var topic: String
        package var pushType: String
        package var priority: Int
        package var expiration: Int?
        package var collapseID: String?
        package var teamID: String
        package var keyID: String
        package var background: Bool
        package var dropped: Bool
        package var payloadBytes: Int
        enum CodingKeys: String, CodingKey {
            case time, environment, apnsID = "apns-id", apnsUniqueID = "apns-unique-id", deviceToken = "device-token"
            case topic, pushType = "push-type", priority, expiration, collapseID = "collapse-id", teamID = "team-id"
            case keyID = "key-id", background, dropped, payloadBytes = "payload-bytes"
        }
    }

    /// Says, as a warning, that the log's last line was cut short by a kill when it was opened
    /// (ended then, so readers count it as unreadable): how long it was and in which file.
    package func reportCutLine(to logger: Logger) { lines.reportCutLine(of: "the delivery log", to: logger) }

    /// Empties the log in `file` down to its stamp (`push-receiver reset`).
    package static func empty(_ file: URL) throws(ReceiverError) {
        do { try AppendOnlyFile.empty(file, what: "the delivery log", format: format) } catch { throw ReceiverError(error) }
    }

    /// Reads a delivery log. A torn last line (a write cut by a kill) is skipped.
    package static func entries(in file: URL) throws(ReceiverError) -> [Entry] { try read(file).records }

    /// Reads a delivery log: its entries, and the lines that are not entries (a line cut by a
    /// kill, which a restarted receiver ended before appending, is one).
    package static func read(_ file: URL) throws(ReceiverError) -> JSONLinesRead<Entry> {
        let decoder = JSONDecoder()
        do { return try AppendOnlyFile.lines(in: file, what: "the delivery log", format: format) { try decoder.decode(Entry.self, from: $1) } } catch {
            throw ReceiverError(error)
        }
    }

    /// How many lines a delivery log holds, ended by their newline (a last line a kill cut short is
    /// not one; its stamp is not one either), read in pieces: a large log is counted without being
    /// held in memory as ``entries(in:)`` holds it. A receiver that restarts after a kill ends a cut line before it
    /// appends, so a log that went through one may count a line more than ``entries(in:)`` decodes.
    package static func count(in file: URL) throws(ReceiverError) -> Int {
        let handle: FileHandle
        do { handle = try FileHandle(forReadingFrom: file) } catch {
            throw ReceiverError(.storage, "cannot read \(file.path): \(error.localizedDescription)")
        }
        defer { try? handle.close() }
        var lines = 0
        do {
            while let piece = try handle.read(upToCount: 1 << 16), !piece.isEmpty {
                lines += piece.reduce(into: 0) { count, byte in if byte == UInt8(ascii: "\n") { count += 1 } }
            }
        } catch {
            throw ReceiverError(.storage, "cannot read \(file.path): \(error.localizedDescription)")
        }
        let stamped = AppendOnlyFile.firstLine(of: file).flatMap(FormatStamp.parse(line:)) != nil
        return stamped ? lines - 1 : lines
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
        /// acceptance. Written in place into room made once for the longest line these values
        /// can make (every string escaped), then cut to what was written: appending piece by
        /// piece (a capacity check each) cost a tenth of the receiver's time.
        mutating func encode(_ push: AcceptedPush, into out: inout [UInt8]) {
            let milliseconds = Int64((push.receivedAt.timeIntervalSince1970 * 1000).rounded(.down))
            let (second, millisecond) = milliseconds.quotientAndRemainder(dividingBy: 1000)
            if second != self.second {
                self.second = second
                secondText = RFC3339.secondText(second)
            }
            let escapable = push.topic.utf8.count + push.pushType.rawValue.utf8.count + (push.collapseID?.utf8.count ?? 0)
                + push.teamID.utf8.count + push.keyID.utf8.count
            let bound = 400 + secondText.count + 6 * escapable + push.apnsID.utf8.count + (push.apnsUniqueID?.utf8.count ?? 0)
                + push.deviceToken.hex.utf8.count + push.payload.count
            let start = out.count
            out.append(contentsOf: repeatElement(0, count: bound))
            let end = out.withUnsafeMutableBufferPointer { buffer in
                var line = LineWriter(at: buffer.baseAddress! + start)
                line.raw("{\"time\":\"")
                line.bytes(secondText)
                line.digits(Int(millisecond), 3)
                line.raw("Z\",\"environment\":\"")
                line.text(push.environment.rawValue)
                line.raw("\",\"apns-id\":\"")
                line.text(push.apnsID)
                if let unique = push.apnsUniqueID {
                    line.raw("\",\"apns-unique-id\":\"")
                    line.text(unique)
                }
                line.raw("\",\"device-token\":\"")
                line.text(push.deviceToken.hex)
                line.raw("\",\"topic\":")
                line.jsonString(push.topic)
                line.raw(",\"push-type\":")
                line.jsonString(push.pushType.rawValue)
                line.raw(",\"priority\":")
                line.decimal(push.priority.rawValue)
                if let expiration = push.expiration {
                    line.raw(",\"expiration\":")
                    line.decimal(expiration)
                }
                if let collapse = push.collapseID {
                    line.raw(",\"collapse-id\":")
                    line.jsonString(collapse)
                }
                line.raw(",\"team-id\":")
                line.jsonString(push.teamID)
                line.raw(",\"key-id\":")
                line.jsonString(push.keyID)
                line.raw(push.isBackground ? ",\"background\":true" : ",\"background\":false")
                line.raw(push.dropped ? ",\"dropped\":true" : ",\"dropped\":false")
                line.raw(",\"payload-bytes\":")
                line.decimal(push.payload.count)
                line.raw(",\"payload\":")
                line.payload(push.payload)
                line.raw("}\n")
                return start + line.written
            }
            out.removeLast(start + bound - end)
        }
    }

    /// Writes bytes at a pointer with room enough (``LineEncoder`` made it).
    private struct LineWriter {
        let base: UnsafeMutablePointer<UInt8>
        private(set) var written = 0
        init(at base: UnsafeMutablePointer<UInt8>) { self.base = base }

        mutating func byte(_ byte: UInt8) {
            base[written] = byte
            written += 1
        }
        mutating func bytes(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard let source = bytes.baseAddress else { return }
            (base + written).update(from: source, count: bytes.count)
            written += bytes.count
        }
        mutating func bytes(_ bytes: [UInt8]) { bytes.withUnsafeBufferPointer { self.bytes($0) } }
        mutating func raw(_ text: StaticString) { bytes(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)) }
        mutating func text(_ text: String) {
            Self.withUTF8(text) { bytes($0) }
        }
        /// `text` as a JSON string literal, quotes included (escaped as `CompactJSON.appendString` does).
        mutating func jsonString(_ text: String) {
            byte(UInt8(ascii: "\""))
            Self.withUTF8(text) { utf8 in
                for c in utf8 {
                    switch c {
                    case UInt8(ascii: "\""): raw("\\\"")
                    case UInt8(ascii: "\\"): raw("\\\\")
                    case 0x0A: raw("\\n")
                    case 0x0D: raw("\\r")
                    case 0x09: raw("\\t")
                    case 0x00..<0x20:
                        raw("\\u00")
                        byte(Self.hexDigit(c >> 4))
                        byte(Self.hexDigit(c & 0x0F))
                    default: byte(c)
                    }
                }
            }
            byte(UInt8(ascii: "\""))
        }
        /// Calls `body` with the string's UTF-8 bytes, borrowed: `String.withUTF8` is mutating, and
        /// the copy made to call it cost a reference count per field of every line.
        private static func withUTF8(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
            if text.utf8.withContiguousStorageIfAvailable(body) == nil {
                var copy = text
                copy.withUTF8(body)
            }
        }
        /// Valid JSON has no raw line breaks inside strings, so turning them into spaces keeps it one line.
        mutating func payload(_ payload: [UInt8]) {
            payload.withUnsafeBufferPointer { source in
                bytes(source)
                for index in (written - source.count)..<written where base[index] == 0x0A || base[index] == 0x0D { base[index] = 0x20 }
            }
        }
        /// A whole number in decimal, without making a String.
        mutating func decimal(_ value: Int) {
            if value < 0 { byte(UInt8(ascii: "-")) }
            var magnitude = value.magnitude
            var divisor: UInt = 1
            while divisor <= magnitude / 10 { divisor *= 10 }
            while divisor > 0 {
                byte(UInt8(ascii: "0") + UInt8(magnitude / divisor))
                magnitude %= divisor
                divisor /= 10
            }
        }
        /// `value` in `width` decimal digits, zero-padded.
        mutating func digits(_ value: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            while divisor > 0 {
                byte(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: (value / divisor) % 10))
                divisor /= 10
            }
        }
        static func hexDigit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10 }
    }
}

extension AppendOnlyFile {
    /// A warning, when the file's last line was cut short by a kill when it was opened (ended
    /// then, so readers count it as unreadable): how long it was and in which file.
    func reportCutLine(of what: String, to logger: Logger) {
        guard let cut = cutLine else { return }
        logger.warning("\(what)'s last line was cut short (its writer was killed mid-line); ended, and left for readers to skip",
                       metadata: ["file": "\(file.path)", "bytes": "\(cut)"])
    }
}

extension AcceptedPush {
    /// A push read back from its delivery-log line (``DeliveryLog/LineEncoder``'s): the line's
    /// fields, the time to its millisecond, the bundle ID from the topic as validation derived it,
    /// and the payload as the line holds it (the JSON received, line breaks turned to spaces, as
    /// the device gateway sends it). `nil` for a line the encoder did not write.
    package init?(deliveryLogLine line: ArraySlice<UInt8>) {
        // The payload is the last field, and its key cannot occur earlier: every quote inside an
        // earlier string is escaped.
        let key = #","payload":"#.utf8
        guard line.count > 2, line.last == UInt8(ascii: "\n"), line[line.endIndex - 2] == UInt8(ascii: "}"),
              let at = line.firstRange(of: key), at.upperBound <= line.endIndex - 2,
              let entry = try? JSONDecoder().decode(DeliveryLog.Entry.self, from: Data(line)),
              let receivedAt = RFC3339.date(entry.time), let token = DeviceToken(hex: entry.deviceToken),
              let priority = APNsPriority(rawValue: entry.priority) else { return nil }
        let pushType = APNsPushType(rawValue: entry.pushType)
        self.init(receivedAt: receivedAt, environment: entry.environment, apnsID: entry.apnsID, apnsUniqueID: entry.apnsUniqueID,
                  deviceToken: token, topic: entry.topic, bundleID: pushType.bundleID(forTopic: entry.topic), pushType: pushType,
                  priority: priority, expiration: entry.expiration, collapseID: entry.collapseID, teamID: entry.teamID,
                  keyID: entry.keyID, payload: Array(line[at.upperBound..<(line.endIndex - 2)]), isBackground: entry.background,
                  dropped: entry.dropped)
    }
}
