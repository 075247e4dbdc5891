import APNsReceiver
import APNsWire
import Foundation
import Utilities

/// Explains what a push-receiver saw, from its state folder: `deliveries.jsonl` (answered 200),
/// `rejections.jsonl` (refused) and `devices.json` (which environment issued each token). For
/// pushes from your own backend, not only authsim's scenarios.
package enum ReceiverStateExplainer {
    /// The causes a receiver's logs can show.
    package static let codes: [Diagnosis.Code] = [.tokenTypeMismatch, .badDeviceToken, .untrustedProviderKey, .invalidProviderToken,
                                                 .expiredProviderToken, .pushRejected, .droppedByFault, .nothingReceived, .allAccepted,
                                                 .unreadableLines]

    package struct Report: Sendable {
        package let accepted: Int
        package let rejected: Int
        /// Accepted (200) but dropped by a fault: never delivered.
        package let dropped: Int
        /// One diagnosis per distinct cause, most frequent first.
        package let diagnoses: [(count: Int, diagnosis: Diagnosis)]
    }

    /// Whether `state` can be a receiver's `--state` folder: it exists, is a folder and holds one
    /// of its logs. A wrong path, told apart from a log that cannot be read.
    /// - Returns: its two logs' paths (either may be absent).
    @discardableResult
    package static func checkFolder(_ state: URL) throws(ReceiverError) -> (deliveries: URL, rejections: URL) {
        let fileManager = FileManager.default
        var isFolder: ObjCBool = false
        guard fileManager.fileExists(atPath: state.path, isDirectory: &isFolder) else {
            throw ReceiverError(.storage, "\(state.path) does not exist: give push-receiver's --state folder")
        }
        guard isFolder.boolValue else {
            throw ReceiverError(.storage, "\(state.path) is a file, not a folder: give push-receiver's --state folder (the one holding deliveries.jsonl)")
        }
        let (deliveries, rejections) = (state.appendingPathComponent("deliveries.jsonl"), state.appendingPathComponent("rejections.jsonl"))
        guard fileManager.fileExists(atPath: deliveries.path) || fileManager.fileExists(atPath: rejections.path) else {
            throw ReceiverError(.storage, "\(state.path) has neither deliveries.jsonl nor rejections.jsonl: is it push-receiver's --state folder?")
        }
        return (deliveries, rejections)
    }

    package static func explain(state: URL) throws -> Report {
        let (deliveries, rejectionsFile) = try checkFolder(state)
        let fileManager = FileManager.default
        let acceptedRead = fileManager.fileExists(atPath: deliveries.path) ? try DeliveryLog.read(deliveries) : nil
        let rejectedRead = fileManager.fileExists(atPath: rejectionsFile.path) ? try RejectionLog.read(rejectionsFile) : nil
        // A log none of whose lines can be read is not push-receiver's (or not this version's):
        // saying "nothing reached it" would hide that.
        let reads: [(file: URL, records: Int, unreadable: [UnreadableLine])] = [
            (deliveries, acceptedRead?.records.count ?? 0, acceptedRead?.unreadable ?? []),
            (rejectionsFile, rejectedRead?.records.count ?? 0, rejectedRead?.unreadable ?? []),
        ]
        for (file, records, unreadable) in reads {
            guard records == 0, let first = unreadable.first else { continue }
            throw ReceiverError(.storage, "\(file.path) holds no line push-receiver wrote (\(unreadable.count) line\(unreadable.count == 1 ? "" : "s"), line \(first.line): \(first.start)): is it push-receiver's --state folder?")
        }
        let accepted = acceptedRead?.records ?? []
        let rejected = rejectedRead?.records ?? []
        let unreadable = reads.filter { !$0.unreadable.isEmpty }.map { ($0.file.lastPathComponent, $0.unreadable) }
        let registryFile = state.appendingPathComponent("devices.json")
        let registry = fileManager.fileExists(atPath: registryFile.path) ? try DeviceRegistry(file: registryFile) : DeviceRegistry()

        var counts: [Diagnosis: Int] = [:]
        var order: [Diagnosis] = []
        for entry in rejected {
            let diagnosis = explain(entry, registry: registry)
            if counts[diagnosis] == nil { order.append(diagnosis) }
            counts[diagnosis, default: 0] += 1
        }
        let dropped = accepted.filter(\.dropped).count
        if dropped > 0 {
            let diagnosis = Diagnosis(.droppedByFault,
                                      cause: "push-receiver answered \(dropped) push\(dropped == 1 ? "" : "es") 200 but dropped \(dropped == 1 ? "it" : "them") (a drop fault: \"dropped\": true in deliveries.jsonl): they never reached a device, so the app got no silent push",
                                      fix: "remove the drop fault: start push-receiver without --fault drop (on authsim serve: DELETE /api/v1/faults, or the inspector's Faults page)")
            order.append(diagnosis)
            counts[diagnosis] = dropped
        }
        if rejected.isEmpty && dropped < accepted.count || accepted.isEmpty && rejected.isEmpty {
            let delivered = accepted.count - dropped
            let diagnosis = accepted.isEmpty
                ? Diagnosis(.nothingReceived, cause: "push-receiver neither accepted nor refused a push: nothing reached it",
                            fix: "point the backend's APNs client at push-receiver (host, port, its CA) and check that it sends")
                : Diagnosis(.allAccepted, cause: "push-receiver accepted all \(accepted.count) pushes it got\(accepted.contains { !$0.background } ? "" : " (all silent)")\(dropped > 0 ? " and delivered \(delivered)" : ""): if the app still shows reCAPTCHA, the push is not reaching Auth on the device",
                            fix: "check the app: forwarding to Auth.canHandleNotification with swizzling off, and the background mode remote-notification")
            order.append(diagnosis)
            counts[diagnosis] = max(delivered, 1)
        }
        for (name, lines) in unreadable {
            let diagnosis = Diagnosis(.unreadableLines,
                                      cause: "\(lines.count) line\(lines.count == 1 ? "" : "s") of \(name) could not be read and \(lines.count == 1 ? "is" : "are") not counted above (line \(lines.map { String($0.line) }.prefix(5).joined(separator: ", "))\(lines.count > 5 ? ", …" : ""): \(lines[0].start))",
                                      fix: "a push-receiver killed in the middle of a write leaves one cut line; more than that, or lines that are not JSON, mean something else wrote to the file: keep \(name) push-receiver's alone")
            order.append(diagnosis)
            counts[diagnosis] = lines.count
        }
        let diagnoses = order.map { (counts[$0]!, $0) }.sorted { $0.0 > $1.0 }
        return Report(accepted: accepted.count, rejected: rejected.count, dropped: dropped, diagnoses: diagnoses)
    }

    package static func explain(_ entry: RejectionLog.Entry, registry: DeviceRegistry) -> Diagnosis {
        let sentTo = entry.environment
        let other: APNsEnvironment = sentTo == .sandbox ? .production : .sandbox
        switch entry.reason {
        case .badDeviceToken:
            if let token = DeviceToken(hex: entry.deviceToken), registry.lookup(token, in: other) != nil {
                let origin = other == .sandbox ? "debug builds" : "TestFlight / App Store builds"
                let right = other == .sandbox ? ".sandbox" : ".prod"
                return Diagnosis(.tokenTypeMismatch,
                                 cause: "pushes were rejected by \(sentTo) with BadDeviceToken: their tokens were issued in \(other) (\(origin)), so the app declared the wrong token type or the backend used the wrong APNs host",
                                 fix: "in those builds call setAPNSToken(token, type: \(right)), or .unknown to let the SDK read embedded.mobileprovision")
            }
            return Diagnosis(.badDeviceToken, cause: "pushes were rejected by \(sentTo) with BadDeviceToken: \(entry.detail)",
                             fix: "send the hex token the device registered, to the environment that issued it")
        case .invalidProviderToken where entry.providerTokenProblem == .unknownKeyID:
            return Diagnosis(.untrustedProviderKey, cause: "pushes were rejected with InvalidProviderToken: \(entry.detail): push-receiver trusts only the keys it was given",
                             fix: "start push-receiver with your key too: --p8 AuthKey_<KEYID>.p8 --team-id <TEAMID> (--key-id if the file is named otherwise), or sign with the key in its --certs folder")
        case .invalidProviderToken:
            return Diagnosis(.invalidProviderToken, cause: "pushes were rejected with InvalidProviderToken: \(entry.detail)",
                             fix: "sign with the .p8 key whose Key ID is the token's kid and your Team ID as iss (swapped IDs are a common cause)")
        case .expiredProviderToken:
            return Diagnosis(.expiredProviderToken, cause: "pushes were rejected with ExpiredProviderToken: \(entry.detail)",
                             fix: "sync the provider's clock and mint a new token at least every hour")
        default:
            let reason = entry.reason
            return Diagnosis(.pushRejected, cause: "pushes were rejected by \(sentTo) with \(entry.status) \(entry.reason): \(reason.meaning)",
                             fix: reason.fix)
        }
    }
}
