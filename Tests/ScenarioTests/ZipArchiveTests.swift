import Diagnostics
import Foundation
import TestSupport
import Testing

/// doctor's zip reader (Diagnostics/ZipArchive.swift) on archives Python's `zipfile` writes, in
/// each shape an .ipa comes in, and on damaged ones, which must fail with a reason and never hang.
@Suite struct ZipArchiveTests {
    /// Writes the archives of `script` (Python, given the folder) and opens `name` among them.
    static func archives(_ test: String) async throws -> URL {
        let folder = temporaryDirectory(test)
        let made = try await runProgram(["python3", "-c", script, folder.path])
        #expect(made.status == 0, "\(made.output)")
        return folder
    }

    /// 150 KB of patterned bytes (several 64 KB chunks in and out), stored, deflated, streamed
    /// (sizes in a data descriptor), ZIP64, a folder and a symbolic link; then the damaged copies.
    static let script = #"""
    import io, os, struct, sys, zipfile, zlib
    out = sys.argv[1]
    big = bytes((i * 7 + i // 251) & 0xFF for i in range(150_000))
    def save(name, data):
        with open(os.path.join(out, name), "wb") as f: f.write(data)

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr(zipfile.ZipInfo("Payload/"), b"")
        z.writestr("Payload/App.app/Info.plist", big, compress_type=zipfile.ZIP_DEFLATED)
        z.writestr("Payload/App.app/stored.bin", big[:70_000], compress_type=zipfile.ZIP_STORED)
        link = zipfile.ZipInfo("Payload/App.app/link")
        link.create_system, link.external_attr = 3, 0o120777 << 16
        z.writestr(link, b"stored.bin")
    good = buffer.getvalue()
    save("good.zip", good)

    class Unseekable(io.RawIOBase):
        def __init__(self): self.data = bytearray()
        def writable(self): return True
        def write(self, b): self.data += b; return len(b)
    stream = Unseekable()
    with zipfile.ZipFile(stream, "w", zipfile.ZIP_DEFLATED) as z:
        with z.open("Payload/App.app/Info.plist", "w") as f: f.write(big)
    save("streamed.zip", bytes(stream.data))

    # ZIP64 by hand: sizes and offset as 0xFFFFFFFF in the directory, their values in the extra field.
    name, packed = b"Payload/App.app/Info.plist", zlib.compress(big, 9)[2:-4]
    crc = zlib.crc32(big)
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 8, 0, 0, crc, len(packed), len(big), len(name), 0) + name
    extra = struct.pack("<HHQQQ", 1, 24, len(big), len(packed), 0)
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 8, 0, 0, crc, 0xFFFFFFFF, 0xFFFFFFFF,
                          len(name), len(extra), 0, 0, 0, 0, 0xFFFFFFFF) + name + extra
    start = len(local) + len(packed)
    record = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, 1, 1, len(central), start)
    locator = struct.pack("<IIQI", 0x07064B50, 0, start + len(central), 1)
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    save("zip64.zip", local + packed + central + record + locator + end)

    # Damage: each changes one thing of good.zip's directory (entries in the order written).
    directory = good.rindex(b"PK\x05\x06")
    start = struct.unpack_from("<I", good, directory + 16)[0]
    def entry(n):
        at = start
        for _ in range(n):
            lengths = struct.unpack_from("<HHH", good, at + 28)
            at += 46 + sum(lengths)
        return at
    def patched(n, offset, fmt, value):
        data = bytearray(good)
        struct.pack_into(fmt, data, entry(n) + offset, value)
        return bytes(data)
    save("short.zip", patched(1, 20, "<I", 100))
    save("crc.zip", patched(2, 16, "<I", zlib.crc32(big[:70_000]) ^ 1))
    save("smaller.zip", patched(1, 24, "<I", len(big) - 1))
    save("larger.zip", patched(1, 24, "<I", len(big) + 1))
    save("encrypted.zip", patched(1, 8, "<H", 1))
    save("method.zip", patched(2, 10, "<H", 12))
    save("offset.zip", patched(1, 42, "<I", 5))
    save("past-end.zip", patched(2, 20, "<I", 0x7FFFFFFF))
    save("cut.zip", good[:-30])
    save("count.zip", good[:-12] + struct.pack("<H", 9) + good[-10:])
    save("empty.zip", b"")
    """#

    func read(_ archive: ZipArchive, _ path: String, limit: UInt64 = 1 << 30) throws -> [UInt8] {
        var bytes: [UInt8] = []
        try archive.extract(try #require(archive[path]), limit: limit) { bytes += $0 }
        return bytes
    }

    static let big: [UInt8] = (0..<150_000).map { UInt8(truncatingIfNeeded: $0 * 7 + $0 / 251) }

    @Test("stored, deflated, streamed and ZIP64 entries unpack to their bytes; folders and links are told apart")
    func shapes() async throws {
        let folder = try await Self.archives("zip-shapes")
        defer { try? FileManager.default.removeItem(at: folder) }
        let good = try ZipArchive(file: folder.appendingPathComponent("good.zip"))
        #expect(good.entries.map(\.path) == ["Payload/", "Payload/App.app/Info.plist", "Payload/App.app/stored.bin", "Payload/App.app/link"])
        #expect(good.entries.map(\.kind) == [.directory, .file, .file, .symbolicLink])
        #expect(try read(good, "Payload/App.app/Info.plist") == Self.big)
        #expect(try read(good, "Payload/App.app/stored.bin") == Array(Self.big[..<70_000]))
        for name in ["streamed.zip", "zip64.zip"] {
            let archive = try ZipArchive(file: folder.appendingPathComponent(name))
            #expect(archive.entries.map(\.path) == ["Payload/App.app/Info.plist"], "\(name)")
            #expect(try read(archive, "Payload/App.app/Info.plist") == Self.big, "\(name)")
        }
        // To a file of its own, readable only by its user; an existing file is not overwritten.
        let target = folder.appendingPathComponent("Info.plist")
        try good.extract(try #require(good["Payload/App.app/Info.plist"]), to: target, limit: 1 << 20)
        #expect(try Data(contentsOf: target) == Data(Self.big))
        #expect(try FileManager.default.attributesOfItem(atPath: target.path)[.posixPermissions] as? Int == 0o600)
        #expect(throws: ZipArchive.Failure.self) {
            try good.extract(try #require(good["Payload/App.app/stored.bin"]), to: target, limit: 1 << 20)
        }
        // An entry larger than the caller reads is refused before a byte is unpacked.
        let refused = #expect(throws: ZipArchive.Failure.self) { try read(good, "Payload/App.app/Info.plist", limit: 1000) }
        #expect(refused?.description.contains("more than the 1000 read") == true)
    }

    @Test("a damaged archive or entry fails with its reason, never hangs, never yields more than its stated size",
          arguments: [("short.zip", "Payload/App.app/Info.plist", "its deflate stream does not end within its 100 bytes"),
                      ("crc.zip", "Payload/App.app/stored.bin", "fails its CRC-32 check"),
                      ("smaller.zip", "Payload/App.app/Info.plist", "unpacks to more than its stated 149999 bytes"),
                      ("larger.zip", "Payload/App.app/Info.plist", "unpacks to 150000 bytes, not its stated 150001"),
                      ("encrypted.zip", "Payload/App.app/Info.plist", "is encrypted"),
                      ("method.zip", "Payload/App.app/stored.bin", "compressed by method 12"),
                      ("offset.zip", "Payload/App.app/Info.plist", "no local header where the directory says"),
                      ("past-end.zip", "Payload/App.app/stored.bin", "run past the entries' end")])
    func damagedEntry(_ file: String, _ path: String, _ says: String) async throws {
        let folder = try await Self.archives("zip-damaged-entry")
        defer { try? FileManager.default.removeItem(at: folder) }
        let archive = try ZipArchive(file: folder.appendingPathComponent(file))
        let failure = #expect(throws: ZipArchive.Failure.self) { try read(archive, path) }
        #expect(failure?.description.contains(says) == true, "\(failure?.description ?? "")")
    }

    @Test("an archive whose directory cannot be read is refused when opened")
    func damagedDirectory() async throws {
        let folder = try await Self.archives("zip-damaged-directory")
        defer { try? FileManager.default.removeItem(at: folder) }
        for (file, says) in [("cut.zip", "no end of central directory record"), ("empty.zip", "no end of central directory record"),
                             ("count.zip", "holds 4 entries, not 9"), ("absent.zip", "cannot open it")] {
            let failure = #expect(throws: ZipArchive.Failure.self) { _ = try ZipArchive(file: folder.appendingPathComponent(file)) }
            #expect(failure?.description.contains(says) == true, "\(file): \(failure?.description ?? "")")
        }
    }

    @Test("the ipa fuzz target's hang (a deflate stream running to the file's end) is an unreadable .ipa for doctor")
    func fuzzTargetsHang() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Fuzz/regressions/ipa/deflate-stream-past-its-entry").standardized
        let refused = #expect(throws: AppLocationError.self) { _ = try AppLocation.find(file.path) }
        #expect(refused?.code == .unreadableArchive)
    }
}
