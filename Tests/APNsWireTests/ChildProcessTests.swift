import APNsWire
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Child processes")
struct ChildProcessTests {
    @Test("a child gets standard input, output and error only: descriptors opened without close-on-exec stay ours")
    func noInheritedDescriptors() async throws {
        // SwiftNIO's sockets are opened like this one: without O_CLOEXEC.
        let fd = open("/dev/null", O_RDONLY)
        try #require(fd > 2)
        defer { close(fd) }
        let child = try ChildProcess(["/bin/sh", "-c", "if [ -e /proc/$$/fd/\(fd) ]; then echo inherited; else echo closed; fi"], output: .pipe)
        let output = String(decoding: await child.readOutput(), as: UTF8.self)
        #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == "closed")
        #expect(await child.wait() == 0)
    }
}
