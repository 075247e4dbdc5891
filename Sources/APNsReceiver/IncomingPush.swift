import APNsWire

/// One request as it arrived on a stream.
public struct IncomingPush: Sendable {
    public let method: String?
    public let path: String?
    /// Regular (non-pseudo) headers, names lowercase, in arrival order.
    public let headers: [(name: String, value: String)]
    /// The body, kept up to ``PushValidator/maximumBufferedBody`` bytes.
    public let body: [UInt8]
    /// The body's full length, even when more arrived than was kept.
    public let bodyLength: Int
    /// The headers APNs reads, found in one pass over ``headers``.
    public let known: KnownHeaders
    /// What follows `/3/device/` in the path; nil when the path does not start so.
    public let deviceTokenText: String?

    public init(method: String?, path: String?, headers: [(name: String, value: String)], body: [UInt8], bodyLength: Int? = nil) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
        self.bodyLength = bodyLength ?? body.count
        known = KnownHeaders(headers)
        deviceTokenText = path.flatMap { $0.hasPrefix("/3/device/") ? String($0.utf8.dropFirst(10))! : nil }
    }

    /// The first value of the header `name` (lowercase).
    public func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
}

/// The headers APNs reads and allows once each, by name, and the first that came twice.
///
/// One pass over the request's headers comparing bytes: a push carries a handful of headers and
/// the receiver checks every push, so this replaces a linear search by string per header APNs
/// reads and a set lookup per header (a quarter of the receiver's checking time).
public struct KnownHeaders: Sendable {
    public private(set) var authorization: String?
    public private(set) var id: String?
    public private(set) var expiration: String?
    public private(set) var priority: String?
    public private(set) var topic: String?
    public private(set) var collapseID: String?
    public private(set) var pushType: String?
    /// The first header APNs allows once that came again (`DuplicateHeaders`), as it came.
    public private(set) var repeated: (name: String, value: String)?

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
