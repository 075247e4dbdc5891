import NIOHPACK

/// What a request's or a response's header block says, once RFC 9113 §8's rules for a
/// well-formed message hold: the pseudo-header fields it may have, before every regular field,
/// each once; field names in lowercase; none of the connection-specific fields; `te` only as
/// `trailers`; one `content-length`.
public struct HTTP2Head: Sendable {
    public var method: String?
    public var scheme: String?
    public var authority: String?
    public var path: String?
    /// A response's `:status`.
    public var status: Int?
    /// A request's regular fields, in order (`content-length` among them). Built for requests
    /// only: a request's head is reused for every push that repeats its header block, and the
    /// receiver reads them all; an answer's few fields are read with ``field(_:)``, and building
    /// an array for each answer cost the sender 2% of its rate.
    public var fields: [(name: String, value: String)] = []
    public var contentLength: Int?
    /// Every field as decoded, pseudo-header fields included.
    public var headers = HPACKHeaders()

    public init() {}

    /// The first value of a regular field.
    public func field(_ name: String) -> String? {
        for (fieldName, value, _) in headers where fieldName == name { return value }
        return nil
    }

    /// A request's head (RFC 9113 §8.3.1), or why it is malformed.
    public static func request(_ decoded: HPACKHeaders) -> Result<HTTP2Head, MalformedHead> {
        var head = HTTP2Head()
        head.headers = decoded
        head.fields.reserveCapacity(decoded.count)
        var regular = false
        for (name, value, _) in decoded {
            if name.utf8.first == UInt8(ascii: ":") {
                guard !regular else { return .failure(MalformedHead("\(name) after a regular field")) }
                switch name {
                case ":method":
                    guard head.method == nil else { return .failure(MalformedHead("two :method fields")) }
                    head.method = value
                case ":path":
                    guard head.path == nil else { return .failure(MalformedHead("two :path fields")) }
                    guard !value.isEmpty else { return .failure(MalformedHead("an empty :path")) }
                    head.path = value
                case ":scheme":
                    guard head.scheme == nil else { return .failure(MalformedHead("two :scheme fields")) }
                    head.scheme = value
                case ":authority":
                    guard head.authority == nil else { return .failure(MalformedHead("two :authority fields")) }
                    head.authority = value
                default: return .failure(MalformedHead("the pseudo-header \(name), which a request does not have"))
                }
                continue
            }
            regular = true
            if let problem = head.checkRegular(name, value) { return .failure(problem) }
            head.fields.append((name, value))
        }
        guard head.method != nil else { return .failure(MalformedHead("no :method")) }
        guard head.scheme != nil else { return .failure(MalformedHead("no :scheme")) }
        guard head.path != nil else { return .failure(MalformedHead("no :path")) }
        return .success(head)
    }

    /// A response's head (RFC 9113 §8.3.2), or why it is malformed.
    public static func response(_ decoded: HPACKHeaders) -> Result<HTTP2Head, MalformedHead> {
        var head = HTTP2Head()
        head.headers = decoded
        var regular = false
        for (name, value, _) in decoded {
            if name.utf8.first == UInt8(ascii: ":") {
                guard !regular else { return .failure(MalformedHead("\(name) after a regular field")) }
                guard name == ":status" else { return .failure(MalformedHead("the pseudo-header \(name), which a response does not have")) }
                guard head.status == nil else { return .failure(MalformedHead("two :status fields")) }
                guard value.utf8.count == 3, let status = Int(value), status >= 100 else {
                    return .failure(MalformedHead(":status \"\(value)\" is not a three-digit code"))
                }
                head.status = status
                continue
            }
            regular = true
            if let problem = head.checkRegular(name, value) { return .failure(problem) }
        }
        guard head.status != nil else { return .failure(MalformedHead("no :status")) }
        return .success(head)
    }

    /// Trailers: regular fields only (RFC 9113 §8.1).
    public static func trailers(_ decoded: HPACKHeaders) -> MalformedHead? {
        var head = HTTP2Head()
        for (name, value, _) in decoded {
            guard name.utf8.first != UInt8(ascii: ":") else { return MalformedHead("the pseudo-header \(name) in trailers") }
            if let problem = head.checkRegular(name, value) { return problem }
        }
        return nil
    }

    /// Checks a regular field (and reads `content-length`).
    private mutating func checkRegular(_ name: String, _ value: String) -> MalformedHead? {
        // (A loop over the contiguous bytes: the generic UTF8View scan was 1% of the sender's time.)
        let upper = name.utf8.withContiguousStorageIfAvailable { $0.contains { $0 &- 0x41 < 26 } }
            ?? name.utf8.contains { $0 &- 0x41 < 26 }
        guard !upper else { return MalformedHead("the field name \"\(name)\" has uppercase letters") }
        // Only names of these lengths can be one of the fields below: most fields skip the comparisons.
        switch name.utf8.count {
        case 2, 7, 10, 14, 16, 17: break
        default: return nil
        }
        switch name {
        case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
            return MalformedHead("the connection-specific field \(name)")
        case "te" where value != "trailers": return MalformedHead("te: \(value) (only \"trailers\" is allowed)")
        case "content-length":
            guard let length = Int(value), length >= 0 else { return MalformedHead("content-length: \(value)") }
            guard contentLength == nil || contentLength == length else { return MalformedHead("two different content-length values") }
            contentLength = length
        default: break
        }
        return nil
    }
}

/// Why a header block is not a well-formed request or response (a stream error of type
/// PROTOCOL_ERROR, RFC 9113 §8.1.1).
public struct MalformedHead: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
