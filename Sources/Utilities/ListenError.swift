#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A server that could not listen on its address, and why, in words a user can act on.
///
/// The libraries that start servers make one from the socket error (its `errno`); the programs add
/// the option that moves the server (``advice(option:)``), which only they know.
package struct ListenError: Error, Sendable, CustomStringConvertible {
    package enum Reason: Sendable, Equatable {
        /// `EADDRINUSE`: another program (or another authsim) listens there.
        case inUse
        /// `EACCES`: a port below 1024 without the privilege.
        case denied
        /// `EADDRNOTAVAIL` or a name that does not resolve: not an address of this machine.
        case notLocal
        /// Anything else, as the system said it.
        case other(String)

        /// The reason for a socket error's `errno`, or the error's own words.
        package init(errno code: Int32?, otherwise text: String) {
            switch code {
            case EADDRINUSE?: self = .inUse
            case EACCES?: self = .denied
            case EADDRNOTAVAIL?: self = .notLocal
            default: self = .other(text)
            }
        }
    }

    /// What could not listen ("the inspector", "push-receiver (sandbox)").
    package let what: String
    package let host: String
    package let port: Int
    package let reason: Reason

    package init(what: String, host: String, port: Int, reason: Reason) {
        self.what = what
        self.host = host
        self.port = port
        self.reason = reason
    }


    package var description: String {
        let why: String
        switch reason {
        case .inUse: why = "the port is already in use (another program, or another authsim, listens there)"
        case .denied: why = "not allowed (ports below 1024 need privileges)"
        case .notLocal: why = "\(host) is not an address of this machine"
        case .other(let text): why = text
        }
        return "\(what) cannot listen on \(host):\(port): \(why)"
    }

    /// The description and what to do, naming the program's option for this port (`--ui-port`).
    package func advice(option: String?) -> String {
        let move = option.map { "pass another \($0) (0: any free port)" } ?? "choose another port (0: any free port)"
        switch reason {
        case .inUse: return "\(description). Stop what listens there (`ss -ltnp 'sport = :\(port)'` shows it) or \(move)"
        case .denied: return "\(description). Run without privileges on a port above 1023: \(move)"
        case .notLocal: return "\(description). Pass --host with an address it has (127.0.0.1 for this machine only)"
        case .other: return "\(description). \(move.prefix(1).uppercased() + move.dropFirst())"
        }
    }
}

/// An error that may be a ``ListenError`` inside another (a part's own error type).
package protocol CarriesListenError: Error {
    var listenError: ListenError? { get }
}

extension ListenError: CarriesListenError {
    package var listenError: ListenError? { self }
}

extension ListenError {
    /// Whether `host:port` can be listened on now: binds a TCP socket there (with SO_REUSEADDR, as
    /// the servers do) and closes it at once; nil when it could, else why not. Port 0 always can.
    /// A program checks all its ports with it before it starts any, so that a user sees every
    /// conflict at once; the servers' own errors still stand for a port taken in between.
    package static func probe(what: String, host: String, port: Int) -> ListenError? {
        guard port != 0 else { return nil }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let address = found else {
            return ListenError(what: what, host: host, port: port, reason: .notLocal)
        }
        defer { freeaddrinfo(found) }
        let fd = socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
        guard fd >= 0 else { return nil }  // No socket to try with: the server's own start will say.
        defer { close(fd) }
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 else {
            let code = errno
            return ListenError(what: what, host: host, port: port, reason: Reason(errno: code, otherwise: String(cString: strerror(code))))
        }
        return nil
    }
}
