import APNsWire
import Utilities
import Foundation
import Logging
import Synchronization

/// push-receiver's record of the pushes it refused: one JSON line each (environment, token,
/// status, reason, detail), beside the delivery log, which holds exactly the pushes answered 200.
/// `authsim explain --receiver-state` reads both.
package final class RejectionLog: Sendable {
    package var file: URL { lines.file }
    private let lines: AppendOnlyFile

    /// The log's format: 1 without a stamp, 2 with one (the lines are the same).
    package static let format = StateFormat(kind: "rejection log", current: 2)

    /// Where a line that cannot be written is said (the refusal is answered all the same).
    private let logger: Logger?

    /// Opens (creating) `file` for appending, as ``DeliveryLog/init(file:syncEachWrite:)`` does.
    package init(file: URL, logger: Logger? = nil) throws(ReceiverError) {
        do { lines = try AppendOnlyFile(file: file, what: "the rejection log", format: Self.format) } catch { throw ReceiverError(error) }
        self.logger = logger
    }

    /// One refusal.
    package struct Entry: Codable, Sendable, Hashable {
        package var time: Date
        package var environment: APNsEnvironment
        package var apnsID: String
        package var deviceToken: String
        package var status: Int
        package var reason: APNsReason
        package var detail: String
        /// For `InvalidProviderToken` from the token's check: what was wrong with it (absent in
        /// lines written before it was kept).
        package var providerTokenProblem: ProviderTokenError.Code?
        /// The push's `apns-topic` (absent when it had none, and in lines written before it was kept).
        package var topic: String?
        enum CodingKeys: String, CodingKey {
            case time, environment, apnsID = "apns-id", deviceToken = "device-token", status, reason, detail
            case providerTokenProblem = "provider-token-problem", topic
        }
        package init(time: Date, environment: APNsEnvironment, apnsID: String, deviceToken: String, status: Int, reason: APNsReason, detail: String,
                    providerTokenProblem: ProviderTokenError.Code? = nil, topic: String? = nil) {
            self.time = time
            self.environment = environment
            self.apnsID = apnsID
            self.deviceToken = deviceToken
            self.status = status
            self.reason = reason
            self.detail = detail
            self.providerTokenProblem = providerTokenProblem
            self.topic = topic
        }

        /// The entry for a refusal (the token lowercased, as the log keeps it).
        package init(_ rejection: PushRejection, apnsID: String, environment: APNsEnvironment, deviceToken: String, at time: Date) {
            self.init(time: time, environment: environment, apnsID: apnsID, deviceToken: deviceToken.lowercased(), status: rejection.status,
                      reason: rejection.reason, detail: rejection.detail, providerTokenProblem: rejection.providerTokenProblem, topic: rejection.topic)
        }
    }

    /// Appends one line (a failure to write is not the push's problem: it is left out).
    package func append(_ rejection: PushRejection, apnsID: String, environment: APNsEnvironment, deviceToken: String, at time: Date = Date()) {
        append(Entry(rejection, apnsID: apnsID, environment: environment, deviceToken: deviceToken, at: time))
    }

    /// Appends one entry (left out when it cannot be written, as above, and said to the logger).
    package func append(_ entry: Entry) {
        do {
            try lines.append(String(decoding: try Self.encode(entry), as: UTF8.self) + "\n")
        } catch {
            logger?.error("the rejection log could not be written; the refusal is answered, its line left out",
                          metadata: ["file": "\(file.path)", "apns-id": "\(entry.apnsID)", "error": "\(error)"])
        }
    }

    /// An entry as one line of JSON (without the newline), keys sorted, times in RFC 3339 with
    /// milliseconds as the delivery log writes them: the file's lines and a fleet's rows alike.
    package static func encode(_ entry: Entry) throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(RFC3339.string(date))
        }
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(entry)
    }

    /// Says, as a warning, that the log's last line was cut short by a kill when it was opened
    /// (ended then, so readers count it as unreadable): how long it was and in which file.
    package func reportCutLine(to logger: Logger) { lines.reportCutLine(of: "the rejection log", to: logger) }

    /// Empties the log in `file` down to its stamp (`push-receiver reset`).
    package static func empty(_ file: URL) throws(ReceiverError) {
        do { try AppendOnlyFile.empty(file, what: "the rejection log", format: format) } catch { throw ReceiverError(error) }
    }

    /// Reads a rejection log; lines that are not entries are left out (``read(_:)`` lists them).
    package static func entries(in file: URL) throws(ReceiverError) -> [Entry] { try read(file).records }

    /// Reads a rejection log: its entries, and the lines that are not entries.
    package static func read(_ file: URL) throws(ReceiverError) -> JSONLinesRead<Entry> {
        do { return try AppendOnlyFile.lines(in: file, what: "the rejection log", format: format) { try decode($1) } } catch {
            throw ReceiverError(error)
        }
    }

    /// One line (or a fleet's row) as an entry; its time with milliseconds (since issue 19) or without (before).
    package static func decode(_ line: Data) throws -> Entry {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            if let date = RFC3339.date(text) { return date }
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(text) is not an RFC 3339 time")
        }
        return try decoder.decode(Entry.self, from: line)
    }
}
