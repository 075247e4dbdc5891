import Glibc

/// A TCP socket bound to a port of 127.0.0.1 the kernel chose (and listening, when asked), held
/// until released or deinitialised: a port another program finds taken, or (released at once) one
/// nothing listens on now.
package final class HeldPort {
    package let port: Int
    private var descriptor: Int32

    /// - Parameter listening: whether it also listens (a port a server's bind finds in use).
    package init(listening: Bool = true) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = descriptor
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && (!listening || listen(fd, 1) == 0) && getsockname(fd, $0, &length) == 0
            }
        }
        guard descriptor >= 0, bound else {
            let code = errno
            if descriptor >= 0 { close(descriptor) }
            throw HeldPortError(errno: code)
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Closes the socket: the port is free again.
    package func release() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}

package struct HeldPortError: Error, CustomStringConvertible {
    package let errno: Int32
    package var description: String { "cannot bind a port of 127.0.0.1: errno \(errno)" }
}
