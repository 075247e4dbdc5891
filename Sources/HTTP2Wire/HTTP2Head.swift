import NIOHPACK

/// What a request's or a response's header block says, once RFC 9113 §8's rules for a
/// well-formed message hold: the pseudo-header fields it may have, before every regular field,
/// each once; field names in lowercase; none of the connection-specific fields; `te` only as
/// `trailers`; one `content-length`.
///
/// Immutable and shared by reference: a server hands the same head to every request that repeats
/// its header block (``HTTP2Connection``), so a head goes from the connection to the stream and
/// to the request for one reference count, not one per field, and an owner can tell a repeated
/// head by identity (`===`) and keep what it derived from it.
package final class HTTP2Head: Sendable {
    package let method: String?
    package let scheme: String?
    package let authority: String?
    package let path: String?
    /// A response's `:status`.
    package let status: Int?
    /// A request's regular fields, in order (`content-length` among them). Built for requests
    /// only: a request's head is reused for every push that repeats its header block, and the
    /// receiver reads them all; an answer's few fields are read with ``field(_:)``, and building
    /// an array for each answer cost the sender 2% of its rate.
    package let fields: [(name: String, value: String)]
    package let contentLength: Int?
    /// Every field as decoded, pseudo-header fields included.
    package let headers: HPACKHeaders

    private init(method: String? = nil, scheme: String? = nil, authority: String? = nil, path: String? = nil, status: Int? = nil,
                 fields: [(name: String, value: String)] = [], contentLength: Int?, headers: HPACKHeaders) {
        self.method = method
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.status = status
        self.fields = fields
        self.contentLength = contentLength
        self.headers = headers
    }

    /// The first value of a regular field.
    package func field(_ name: String) -> String? {
        for (fieldName, value, _) in headers where fieldName == name { return value }
        return nil
    }

    /// A request's head (RFC 9113 §8.3.1), or why it is malformed.
    package static func request(_ decoded: HPACKHeaders) -> Result<HTTP2Head, MalformedHead> {
        var method: String?, scheme: String?, authority: String?, path: String?
        var contentLength: Int?
        var fields: [(name: String, value: String)] = []
        fields.reserveCapacity(decoded.count)
        var regular = false
        for (name, value, _) in decoded {
            if name.utf8.first == UInt8(ascii: ":") {
                guard !regular else { return .failure(MalformedHead("\(name) after a regular field")) }
                switch name {
                case ":method":
                    guard method == nil else { return .failure(MalformedHead("two :method fields")) }
                    method = value
                case ":path":
                    guard path == nil else { return .failure(MalformedHead("two :path fields")) }
                    guard !value.isEmpty else { return .failure(MalformedHead("an empty :path")) }
                    path = value
                case ":scheme":
                    guard scheme == nil else { return .failure(MalformedHead("two :scheme fields")) }
                    scheme = value
                case ":authority":
                    guard authority == nil else { return .failure(MalformedHead("two :authority fields")) }
                    authority = value
                default: return .failure(MalformedHead("the pseudo-header \(name), which a request does not have"))
                }
                continue
            }
            regular = true
            if let problem = checkRegular(name, value, contentLength: &contentLength) { return .failure(problem) }
            fields.append((name, value))
        }
        guard method != nil else { return .failure(MalformedHead("no :method")) }
        guard scheme != nil else { return .failure(MalformedHead("no :scheme")) }
        guard path != nil else { return .failure(MalformedHead("no :path")) }
        return .success(HTTP2Head(method: method, scheme: scheme, authority: authority, path: path, fields: fields,
                                  contentLength: contentLength, headers: decoded))
    }

    /// A response's head (RFC 9113 §8.3.2), or why it is malformed.
    package static func response(_ decoded: HPACKHeaders) -> Result<HTTP2Head, MalformedHead> {
        var status: Int?
        var contentLength: Int?
        var regular = false
        for (name, value, _) in decoded {
            if name.utf8.first == UInt8(ascii: ":") {
                guard !regular else { return .failure(MalformedHead("\(name) after a regular field")) }
                guard name == ":status" else { return .failure(MalformedHead("the pseudo-header \(name), which a response does not have")) }
                guard status == nil else { return .failure(MalformedHead("two :status fields")) }
                guard value.utf8.count == 3, let code = Int(value), code >= 100 else {
                    return .failure(MalformedHead(":status \"\(value)\" is not a three-digit code"))
                }
                status = code
                continue
            }
            regular = true
            if let problem = checkRegular(name, value, contentLength: &contentLength) { return .failure(problem) }
        }
        guard status != nil else { return .failure(MalformedHead("no :status")) }
        return .success(HTTP2Head(status: status, contentLength: contentLength, headers: decoded))
    }

    /// Trailers: regular fields only (RFC 9113 §8.1).
    package static func trailers(_ decoded: HPACKHeaders) -> MalformedHead? {
        var contentLength: Int?
        for (name, value, _) in decoded {
            guard name.utf8.first != UInt8(ascii: ":") else { return MalformedHead("the pseudo-header \(name) in trailers") }
            if let problem = checkRegular(name, value, contentLength: &contentLength) { return problem }
        }
        return nil
    }

    /// Checks a regular field (and reads `content-length` into `contentLength`).
    private static func checkRegular(_ name: String, _ value: String, contentLength: inout Int?) -> MalformedHead? {
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
package struct MalformedHead: Error, Sendable, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
