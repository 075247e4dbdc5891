import APNsWire

/// One request as it arrived on a stream.
package struct IncomingPush: Sendable {
    /// What the request's head says as APNs reads it, and the checks that read only the head:
    /// made once and shared by every push that repeats the head (a provider sends the same
    /// header block push after push, and the receiver keeps the last head it read).
    final class Head: Sendable {
        let method: String?
        let path: String?
        /// Regular (non-pseudo) headers, names lowercase, in arrival order.
        let headers: [(name: String, value: String)]
        let known: KnownHeaders
        /// What follows `/3/device/` in the path; nil when the path does not start so.
        let deviceTokenText: String?
        /// ``PushValidator``'s checks of the head alone, in APNs's order.
        let verdict: Result<PushValidator.CheckedHead, PushRejection>

        init(method: String?, path: String?, headers: [(name: String, value: String)]) {
            self.method = method
            self.path = path
            self.headers = headers
            let known = KnownHeaders(headers)
            let tokenText = path.flatMap { $0.hasPrefix("/3/device/") ? String($0.utf8.dropFirst(10))! : nil }
            self.known = known
            deviceTokenText = tokenText
            verdict = Result { () throws(PushRejection) in
                try PushValidator.checkHead(method: method, path: path, known: known, deviceTokenText: tokenText)
            }
        }
    }

    let head: Head
    /// The body, kept up to ``PushValidator/maximumBufferedBody`` bytes.
    package let body: [UInt8]
    /// The body's full length, even when more arrived than was kept.
    package let bodyLength: Int

    package var method: String? { head.method }
    package var path: String? { head.path }
    /// Regular (non-pseudo) headers, names lowercase, in arrival order.
    package var headers: [(name: String, value: String)] { head.headers }
    /// The headers APNs reads, found in one pass over ``headers``.
    package var known: KnownHeaders { head.known }
    /// What follows `/3/device/` in the path; nil when the path does not start so.
    package var deviceTokenText: String? { head.deviceTokenText }

    package init(method: String?, path: String?, headers: [(name: String, value: String)], body: [UInt8], bodyLength: Int? = nil) {
        self.init(head: Head(method: method, path: path, headers: headers), body: body, bodyLength: bodyLength)
    }

    init(head: Head, body: [UInt8], bodyLength: Int? = nil) {
        self.head = head
        self.body = body
        self.bodyLength = bodyLength ?? body.count
    }

    /// The first value of the header `name` (lowercase).
    package func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
}

/// The headers APNs reads and allows once each, by name, and the first that came twice.
///
/// One pass over the request's headers comparing bytes: a push carries a handful of headers and
/// the receiver checks every push, so this replaces a linear search by string per header APNs
/// reads and a set lookup per header (a quarter of the receiver's checking time).
package struct KnownHeaders: Sendable {
    package private(set) var authorization: String?
    package private(set) var id: String?
    package private(set) var expiration: String?
    package private(set) var priority: String?
    package private(set) var topic: String?
    package private(set) var collapseID: String?
    package private(set) var pushType: String?
    /// The first header APNs allows once that came again (`DuplicateHeaders`), as it came.
    package private(set) var repeated: (name: String, value: String)?

    init(_ headers: [(name: String, value: String)]) {
        for header in headers {
            func keep(_ slot: inout String?) -> Bool {
                guard slot == nil else { return false }
                slot = header.value
                return true
            }
            let first: Bool
            switch Self.name(header.name) {
            case .authorization: first = keep(&authorization)
            case .id: first = keep(&id)
            case .expiration: first = keep(&expiration)
            case .priority: first = keep(&priority)
            case .topic: first = keep(&topic)
            case .collapseID: first = keep(&collapseID)
            case .pushType: first = keep(&pushType)
            case nil: continue
            }
            if !first, repeated == nil { repeated = header }
        }
    }

    private enum Name { case authorization, id, expiration, priority, topic, collapseID, pushType }

    /// Which of ``APNsHeader/singular`` `name` is: by its length (no work for other lengths),
    /// then by content (most of these fit in a small string, compared as two words).
    private static func name(_ name: String) -> Name? {
        switch name.utf8.count {
        case 7: return name == APNsHeader.id ? .id : nil
        case 10: return name == APNsHeader.topic ? .topic : nil
        case 13: return name == APNsHeader.authorization ? .authorization : name == APNsHeader.priority ? .priority : nil
        case 14: return name == APNsHeader.pushType ? .pushType : nil
        case 15: return name == APNsHeader.expiration ? .expiration : nil
        case 16: return name == APNsHeader.collapseID ? .collapseID : nil
        default: return nil
        }
    }

}
