import Utilities
import Foundation

/// A notification payload: the JSON body of a push.
package struct NotificationPayload: Sendable, Hashable {
    /// The exact bytes sent.
    package let bytes: [UInt8]
    /// `"Simulator Target Bundle"` from an `xcrun simctl push` file, removed from ``bytes``.
    package let simulatorTargetBundle: String?
    /// Whether `aps` holds only `"content-available": 1`: a background (silent) push.
    package let isBackground: Bool

    /// Parses a payload. `.apns` files (and plain JSON with the key) may carry
    /// `"Simulator Target Bundle"`, which names the app and is not sent.
    ///
    /// - Throws: ``PayloadError`` when the bytes are not a JSON object or `aps` is not an object.
    package init(json bytes: [UInt8]) throws(PayloadError) {
        guard !bytes.isEmpty else { throw PayloadError(.empty, "the payload is empty") }
        guard let shape = PayloadScanner.scan(bytes) else { throw PayloadError(.invalidJSON, "the payload is not valid JSON") }
        guard shape.isObject else { throw PayloadError(.notAnObject, "the payload is JSON but not an object") }
        if let aps = shape.aps, aps != .object { throw PayloadError(.apsNotAnObject, "\"aps\" must be an object") }
        self.isBackground = shape.isBackground
        guard shape.hasTargetBundle else {
            self.bytes = bytes
            self.simulatorTargetBundle = nil
            return
        }
        // Only `.apns` files carry the key: parse them whole, to take it out.
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            throw PayloadError(.invalidJSON, "the payload is not valid JSON")
        }
        guard let target = object["Simulator Target Bundle"] as? String else {
            throw PayloadError(.invalidTargetBundle, "\"Simulator Target Bundle\" must be a string")
        }
        self.simulatorTargetBundle = target
        var stripped = object
        stripped.removeValue(forKey: "Simulator Target Bundle")
        // Serialising a dictionary that just came out of JSONSerialization cannot fail.
        self.bytes = Array(try! JSONSerialization.data(withJSONObject: stripped, options: [.sortedKeys]))
    }

    /// Reads a payload file: plain APNs JSON (`.json`) or an `xcrun simctl push` file (`.apns`).
    package init(contentsOf url: URL) throws(PayloadError) {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw PayloadError(.unreadable, "cannot read \(url.path): \(error.localizedDescription)")
        }
        do { try self.init(json: Array(data)) } catch {
            throw PayloadError(error.code, "\(url.lastPathComponent): \(error.message)")
        }
    }

    /// The push type a payload implies when none is given: `background` for `content-available`
    /// alone, else `alert`.
    package var impliedPushType: APNsPushType { isBackground ? .background : .alert }

    /// The payload as a dictionary, for handing to an app (`userInfo`).
    package var userInfo: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]) ?? [:]
    }
}

/// Why a payload was refused.
package struct PayloadError: CodedError {
    package enum Code: String, Sendable, Hashable {
        case empty, invalidJSON, notAnObject, apsNotAnObject, invalidTargetBundle, tooLarge, unreadable
    }
    package let code: Code
    package let message: String
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}
