import Utilities
import Foundation
import Synchronization
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

@Suite("Compact JSON")
struct CompactJSONTests {
    @Test("writes what JSONSerialization writes with sorted keys, for the values the backend sends")
    func sameAsFoundation() throws {
        let samples: [[String: Any]] = [
            ["aps": ["content-available": 1], "com.google.firebase.auth": ["receipt": "R/1+", "secret": "S\"\\\n\u{1}é"]],
            ["alg": "ES256", "kid": "abc", "typ": "JWT", "n": -12, "ok": true, "no": false, "list": ["a", "b"], "empty": [:] as [String: Any]],
            ["error": ["code": 400, "message": "INVALID_CODE", "errors": [["reason": "invalid", "domain": "global"]]]],
        ]
        for sample in samples {
            let ours = try #require(CompactJSON.encode(sample))
            let theirs = String(decoding: try JSONSerialization.data(withJSONObject: sample, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
            #expect(ours == theirs)
            // And it reads back to the same thing.
            let parsed = try JSONSerialization.jsonObject(with: Data(ours.utf8))
            #expect(String(decoding: try JSONSerialization.data(withJSONObject: parsed, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self) == ours)
        }
        #expect(CompactJSON.encode(["date": Date()]) == nil)
        #expect(CompactJSON.encode(["x": Double.nan]) == nil)
    }
}

@Suite("Base64url")
struct Base64URLTests {
    @Test("encodes as Foundation's base64 with the url-safe alphabet and no padding; decodes it back, padded or not")
    func matchesFoundation() throws {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let foundation = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            let unpadded = String(foundation.prefix { $0 != "=" })
            #expect(Base64URL.encode(bytes) == unpadded)
            #expect(Base64URL.decode(Substring(unpadded)) == bytes)
            #expect(Base64URL.decode(Substring(foundation)) == bytes)
        }
        #expect(Base64URL.decode("a+b/") == nil)
        #expect(Base64URL.decode("abcde") == nil)
        #expect(Base64URL.decode("ab===") == nil)
        #expect(Base64URL.decode("abc==") == nil)
        // A `=` inside the last group (a decoder that skips it would take "abc"), and empty input.
        #expect(Base64URL.decode("ab=c") == nil)
        #expect(Base64URL.decode("a=") == nil)
        #expect(Base64URL.decode("") == [])
    }
}

@Suite("Compact JWS")
struct CompactJWSTests {
    @Test("splits at exactly two dots, as String.split did for every token it accepted; refuses one, three or no dots")
    func segments() throws {
        let jws = try #require(CompactJWS("eyJh.eyJz.c2ln"))
        #expect(jws.header == "eyJh" && jws.payload == "eyJz" && jws.signature == "c2ln" && jws.signingInput == "eyJh.eyJz")
        let empty = try #require(CompactJWS(".."))
        #expect(empty.header.isEmpty && empty.payload.isEmpty && empty.signature.isEmpty && empty.signingInput == ".")
        // A non-ASCII character stays whole in its segment (the base64url decode refuses it later).
        let accented = try #require(CompactJWS("é.ü.ß"))
        #expect(accented.header == "é" && accented.payload == "ü" && accented.signature == "ß" && accented.signingInput == "é.ü")
        for bad in ["", "abc", "a.b", "a.b.c.d", "...", "a.b.c."] {
            #expect(CompactJWS(bad) == nil, "\(bad)")
            #expect(bad.split(separator: ".", omittingEmptySubsequences: false).count != 3)
        }
    }
}

@Suite("Web text")
struct WebTextTests {
    /// What the call sites did before, with Foundation.
    static func foundationEscape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
    /// Linux's Foundation sometimes turns escapes that are not UTF-8 into U+FFFD where Apple's returns
    /// nil ("%F9"); WebText returns nil, as Apple's does.
    static func foundationDecode(_ text: some StringProtocol) -> String? {
        let decoded = String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
        return decoded?.contains("\u{FFFD}") == true ? nil : decoded
    }

    @Test("HTML escaping and form decoding give what Foundation's replacingOccurrences and removingPercentEncoding gave, on edge cases and 2,000 random strings")
    func matchesFoundation() {
        let cases = ["", "plain", "a&b<c>d\"e", "&amp;", "é<ü>", "a+b", "%41%42", "%e2%9c%94", "%", "%4", "%zz", "%41%", "%C3%28",
                     "%c3%a9+x", "++", "a%2Bb", "100%", "%00", "tab%09end", "%F9", "%ff%fe"]
        for text in cases {
            #expect(WebText.escapeHTML(text) == Self.foundationEscape(text), "\(text)")
            #expect(WebText.formDecode(text) == Self.foundationDecode(text), "\(text)")
        }
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ab%+&<>\"=019AFfgé✔ ")
        for _ in 0..<2_000 {
            let text = String((0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            #expect(WebText.escapeHTML(text) == Self.foundationEscape(text), "\(text)")
            #expect(WebText.formDecode(text) == Self.foundationDecode(text), "\(text)")
        }
    }

    @Test("percent-encoding leaves RFC 3986's unreserved characters: as Foundation with alphanumerics and -._~ for ASCII; other letters as their UTF-8 bytes, which Foundation left raw")
    func percentEncoding() {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("az AZ09-._~!*'();:@&=+$,/?#[]%\"{}|\\^`<>\n")
        for _ in 0..<2_000 {
            let text = String((0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            #expect(WebText.percentEncode(text) == text.addingPercentEncoding(withAllowedCharacters: allowed), "\(text)")
        }
        #expect(WebText.percentEncode("a b/é~✔") == "a%20b%2F%C3%A9~%E2%9C%94")
        #expect(WebText.formDecode(WebText.percentEncode("a b/é~✔ {\"x\": 1}")) == "a b/é~✔ {\"x\": 1}")
    }

    @Test("form fields: the first of a repeated name wins, a field without = is empty, a component that does not decode is empty")
    func fields() {
        #expect(WebText.formFields("a=1&b=two+words&a=3&flag&bad=%zz&%41=x&=v&&") ==
                ["a": "1", "b": "two words", "flag": "", "bad": "", "A": "x", "": "v"])
        #expect(WebText.formFields("") == [:])
        #expect(WebText.formFields("link=app-1%3A%2F%2Fx%3Fy%3D1%26z%3D2") == ["link": "app-1://x?y=1&z=2"])
    }
}

@Suite("Private files")
struct PrivateFileTests {
    @Test("written whole with mode 0600, replaced whole, no temporary file left; a missing folder is named in the error")
    func replace() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("private-file-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("ready.json")
        try PrivateFile.replace(file, with: Array("first".utf8))
        try PrivateFile.replace(file, with: Array("second".utf8))
        #expect(try String(contentsOf: file, encoding: .utf8) == "second")
        #expect((try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["ready.json"])
        let missing = folder.appendingPathComponent("no/such/file")
        let error = #expect(throws: FileStoreError.self) { try PrivateFile.replace(missing, with: [1]) }
        #expect(error?.message.contains(folder.appendingPathComponent("no/such").path) == true)
    }
}

@Suite("Waiters")
struct WaitersTests {
    /// Waiters kept under a lock, as their owners keep them.
    final class Owner: Sendable {
        let waiters = Mutex(Waiters<Int>())
        let woke = Mutex<[String]>([])
        let registered = Mutex(0)
    }

    @Test("a condition already met keeps nothing; the others wake once, when a value meets them, and only they")
    func thresholds() async {
        let owner = Owner()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let kept = owner.waiters.withLock { waiters in waiters.add({ value in value >= 1 }, continuation, now: 1) }
            #expect(!kept)
            continuation.resume()
        }
        let (allIn, signal) = AsyncStream<Void>.makeStream()
        await withTaskGroup(of: Void.self) { group in
            for (name, threshold) in [("two", 2), ("three", 3)] {
                group.addTask {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        let kept = owner.waiters.withLock { waiters in waiters.add({ value in value >= threshold }, continuation, now: 0) }
                        #expect(kept)
                        if owner.registered.withLock({ $0 += 1; return $0 }) == 2 { signal.yield() }
                    }
                    owner.woke.withLock { $0.append(name) }
                }
            }
            for await _ in allIn { break }
            let none = owner.waiters.withLock { $0.ready(for: 1) }
            #expect(none.isEmpty)
            let two = owner.waiters.withLock { $0.ready(for: 2) }
            #expect(two.count == 1)
            two.forEach { $0.resume() }
            let rest = owner.waiters.withLock { $0.ready(for: 5) }
            #expect(rest.count == 1)
            rest.forEach { $0.resume() }
            let after = owner.waiters.withLock { $0.ready(for: 9) }
            #expect(after.isEmpty)
        }
        #expect(owner.woke.withLock { $0 }.sorted() == ["three", "two"])
    }
}

@Suite("RecentItems: the newest N, oldest first")
struct RecentItemsTests {
    @Test("below, at and past capacity the items are the newest, oldest first; last is the newest")
    func ring() {
        var items = RecentItems<Int>(capacity: 3)
        #expect(items.all.isEmpty && items.last == nil)
        items.append(1)
        items.append(2)
        #expect(items.all == [1, 2] && items.last == 2)
        items.append(3)
        #expect(items.all == [1, 2, 3])
        for value in 4...7 { items.append(value) }
        #expect(items.all == [5, 6, 7] && items.last == 7 && items.count == 3)
    }
}

extension RecentItemsTests {
    @Test("append hands back the item it pushed out, once the ring is full")
    func evicted() {
        var items = RecentItems<String>(capacity: 2)
        #expect(items.append("a") == nil)
        #expect(items.append("b") == nil)
        #expect(items.append("c") == "a")
        #expect(items.append("d") == "b")
        #expect(items.all == ["c", "d"])
    }
}

@Suite("Hex")
struct HexTests {
    @Test("two digits per byte in either case, from an array, a slice, a digest-like sequence and nothing")
    func encodes() {
        let bytes: [UInt8] = [0x00, 0x0f, 0x10, 0x9a, 0xab, 0xff]
        #expect(Hex.encode(bytes) == "000f109aabff")
        #expect(Hex.encode(bytes, uppercase: true) == "000F109AABFF")
        #expect(Hex.encode(bytes[2...]) == "109aabff")
        #expect(Hex.encode(AnySequence(bytes)) == "000f109aabff")  // no contiguous storage: copied once
        #expect(Hex.encode([UInt8]()) == "")
        #expect(Hex.encode(0...255).count == 512)
    }
}
