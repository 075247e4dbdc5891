import APNsReceiver
import APNsWire
import AuthBackend
import Crypto
import Diagnostics
import FirebaseAuthCore
import DeviceOS
import FirebaseCore
import Foundation
import HTTP2Wire
import IdentityToolkitAPI
import NIOCore
import Scenarios
import Utilities

/// One fuzz target: a function of raw bytes that must return (never crash, hang or allocate
/// without bound) whatever the bytes are.
package enum FuzzTarget: Sendable {
    /// Plain code, run where it is called.
    case bytes(@Sendable ([UInt8]) -> Void)
    /// Code that answers through async servers' responders: the tests await it; the libFuzzer
    /// build waits for it on libFuzzer's own thread, which is not one of Swift's pool.
    case async(@Sendable ([UInt8]) async -> Void)

    /// Runs the target on `input`.
    package func callAsFunction(_ input: [UInt8]) async {
        switch self {
        case .bytes(let run): run(input)
        case .async(let run): await run(input)
        }
    }
}

/// The parsers that take hostile input, each a ``FuzzTarget``. Run by `authsim-fuzz` under
/// libFuzzer (Fuzz/run.sh) and, on the checked-in corpus and past crashes, by the tests.
package enum FuzzTargets {
    package static let all: [String: FuzzTarget] = [
        "provider-token": .bytes(providerToken),
        "push-request": .bytes(pushRequest),
        "payload": .bytes(payload),
        "redirect-url": .bytes(redirectURL),
        "plist": .bytes(plist),
        "scenario-file": .bytes(scenarioFile),
        "apple-token": .bytes(appleToken),
        "toolkit-body": .bytes(toolkitBody),
        "toolkit-json": .bytes(toolkitJSON),
        "http2-frames": .bytes(http2Frames),
        "emulator-import": .bytes(emulatorImport),
        "state-files": .bytes(stateFiles),
        "ipa": .bytes(ipa),
        "gateway-message": .bytes(gatewayMessage),
        "inspector-query": .async(InspectorQueries.respond),
    ]

    static let key = try! P256.Signing.PrivateKey(rawRepresentation: Array(repeating: 7, count: 31) + [1])
    static let trusted = TrustedProviderKey(keyID: "ABCDE12345", teamID: "TEAMID1234", publicKey: key.publicKey)

    /// A provider token (the `authorization: bearer …` value): parse and verify.
    @Sendable static func providerToken(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        _ = try? ProviderTokenVerifier(keys: [trusted]).verify(text)
    }

    /// A whole APNs request: `METHOD PATH` on the first line, then `name: value` header lines, a
    /// blank line and the body, through every check push-receiver makes.
    @Sendable static func pushRequest(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        let (head, body) = text.range(of: "\n\n").map { (String(text[..<$0.lowerBound]), Array(text[$0.upperBound...].utf8)) } ?? (text, [])
        var lines = head.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let requestLine = lines.isEmpty ? [] : lines.removeFirst().split(separator: " ", maxSplits: 1).map(String.init)
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]).lowercased(), String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
        let registry = DeviceRegistry(devices: [RegisteredDevice(token: DeviceToken(hex: String(repeating: "ab", count: 32))!,
                                                                 environment: .sandbox, bundleID: "com.example.authsim")])
        let validator = PushValidator(tokens: ProviderTokenVerifier(keys: [trusted]), registry: registry)
        var auth = ConnectionAuthState()
        _ = validator.validate(IncomingPush(method: requestLine.first, path: requestLine.count > 1 ? requestLine[1] : nil,
                                            headers: headers, body: Array(body.prefix(PushValidator.maximumBufferedBody + 1)),
                                            bodyLength: body.count),
                               environment: .sandbox, auth: &auth, now: Date(timeIntervalSince1970: 1_800_000_000))
    }

    /// A notification payload (JSON, or a `.apns` file).
    @Sendable static func payload(_ bytes: [UInt8]) {
        if let payload = try? NotificationPayload(json: bytes) { _ = payload.userInfo }
    }

    /// A URL handed to the app: the SDK's redirect reader, and `canHandle(url)` with a presentation.
    @Sendable static func redirectURL(_ bytes: [UInt8]) {
        guard let url = URL(string: String(decoding: bytes, as: UTF8.self)) else { return }
        _ = ReCAPTCHAFlow.read(url, scheme: "app-1-123456789012-ios-a1b2c3d4e5f60718", eventID: "ABCDEFGHIJ")
    }

    /// Info.plist / GoogleService-Info.plist / embedded.mobileprovision bytes.
    @Sendable static func plist(_ bytes: [UInt8]) {
        let data = Data(bytes)
        if let plist = try? PropertyListFile(data: data, url: URL(fileURLWithPath: "/fuzz/Info.plist")) {
            _ = try? AppInfo(plist: plist)
            _ = try? FirebaseOptions.read(plist: plist)
        }
        _ = ProvisioningProfile.plist(in: data)
    }

    /// A scenario file.
    @Sendable static func scenarioFile(_ bytes: [UInt8]) {
        _ = try? ScenarioSpec(json: Data(bytes), source: "fuzz.json")
    }

    /// An identity token at signInWithIdp, against a JWKS with one (fuzzed-for) RSA key slot.
    @Sendable static func appleToken(_ bytes: [UInt8]) {
        let jwks = JSONWebKeySet(keys: [JSONWebKey(kty: "RSA", kid: "K", alg: nil, n: "AQAB", e: "AQAB")])
        _ = try? AppleIDProvider.verifySignature(String(decoding: bytes, as: UTF8.self), jwks: jwks)
    }

    /// An Identity Toolkit request as a client sends it: the first byte picks the call (every row
    /// of the backend's table), the second its content type; the rest is the body (or a GET's
    /// query), read exactly as the call's route reads it (strict JSON, the schema check).
    @Sendable static func toolkitBody(_ bytes: [UInt8]) {
        guard bytes.count >= 2 else { return }
        let call = ToolkitCalls.all[Int(bytes[0]) % ToolkitCalls.all.count]
        let body = Array(bytes.dropFirst(2))
        let contentType = bytes[1] & 1 == 0 ? "application/json" : "application/x-www-form-urlencoded"
        _ = try? call.read(body: body, query: String(decoding: body, as: UTF8.self), contentType: contentType)
    }

    /// Structure-aware: the bytes are choices that build a valid JSON body for the call the first
    /// byte picks: its own fields, unknown ones, values of the wrong type, huge and odd numbers,
    /// long strings, deep nesting; then read as the route reads it.
    @Sendable static func toolkitJSON(_ bytes: [UInt8]) {
        var choices = Choices(bytes)
        let call = ToolkitCalls.all[Int(choices.next()) % ToolkitCalls.all.count]
        var text = ""
        JSONMaker(fields: call.schemaFields.sorted() + JSONMaker.strangeNames).object(&choices, depth: 0, into: &text)
        _ = try? call.read(body: Array(text.utf8), query: "", contentType: "application/json")
    }

    /// Bytes from a peer after the connection preface, through the HTTP/2 connection core as
    /// push-receiver's server side reads them, and as apns-sender's client side reads a server's,
    /// in pieces whose sizes the first byte sets; every event taken, every answer written.
    @Sendable static func http2Frames(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let configuration = HTTP2Connection.Configuration(
            settings: [(.headerTableSize, 4096), (.maxConcurrentStreams, 1000), (.initialWindowSize, 65_535), (.maxFrameSize, 16_384),
                       (.maxHeaderListSize, 16_384)],
            clock: { 0 })
        let piece = Int(first) + 1
        for role in [HTTP2Connection.Role.server, .client] {
            var connection = HTTP2Connection(role: role, configuration: configuration)
            var input = (role == .server ? HTTP2Limits.preface : []) + bytes.dropFirst()
            var events = 0
            while !input.isEmpty, events < 100_000 {
                var buffer = ByteBuffer(bytes: input.prefix(piece))
                input.removeFirst(min(piece, input.count))
                connection.receive(&buffer)
                while let event = connection.nextEvent() {
                    events += 1
                    if case .headers(let stream, _, let endStream) = event, role == .server, endStream {
                        var block = ByteBuffer()
                        connection.writeHeaders(&block, stream: stream, endStream: true)
                    }
                    if events >= 100_000 { break }
                }
                _ = connection.takeOutput(allocator: ByteBufferAllocator())
            }
        }
    }

    /// An emulator export handed to `--import`: the bytes split at NUL into the metadata,
    /// `accounts.json`, `config.json` and `authsim-config.json` (an empty part: no such file),
    /// read and applied as an import does.
    @Sendable static func emulatorImport(_ bytes: [UInt8]) {
        let folder = scratch.appendingPathComponent("export")
        try? FileManager.default.removeItem(at: folder)
        try? FileManager.default.createDirectory(at: folder.appendingPathComponent("auth_export"), withIntermediateDirectories: true)
        let parts = bytes.split(separator: 0, maxSplits: 3, omittingEmptySubsequences: false)
        let names = ["firebase-export-metadata.json", "auth_export/accounts.json", "auth_export/config.json", "auth_export/authsim-config.json"]
        for (name, part) in zip(names, parts) where !part.isEmpty {
            _ = FileManager.default.createFile(atPath: folder.appendingPathComponent(name).path, contents: Data(part))
        }
        try? HostileFiles.importExport(folder)
    }

    /// A state file as a crash or an older or newer authsim left it, read as a start reads it: the
    /// first byte picks the backend journal, the delivery log (read, counted, and opened for
    /// appending, which migrates or refuses it), the rejection log, the device registry or a
    /// simulated app's keychain.
    @Sendable static func stateFiles(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let folder = scratch.appendingPathComponent("state")
        try? FileManager.default.removeItem(at: folder)
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let kind = Int(first % 5)
        let file = folder.appendingPathComponent(["journal.jsonl", "deliveries.jsonl", "rejections.jsonl", "devices.json", "keychain.json"][kind])
        _ = FileManager.default.createFile(atPath: file.path, contents: Data(bytes.dropFirst()))
        switch kind {
        case 0:
            try? HostileFiles.replayJournal(in: folder)
        case 1:
            _ = try? DeliveryLog.read(file)
            _ = try? DeliveryLog.count(in: file)
            _ = try? DeliveryLog(file: file)
        case 2:
            _ = try? RejectionLog.read(file)
            _ = try? RejectionLog(file: file)
        case 3:
            _ = try? DeviceRegistry(file: file).all
        default:
            _ = Keychain(file: file).items
        }
    }

    /// An `.ipa` handed to `authsim doctor --app`: found, unpacked (the files doctor reads), removed.
    @Sendable static func ipa(_ bytes: [UInt8]) {
        let file = scratch.appendingPathComponent("App.ipa")
        _ = FileManager.default.createFile(atPath: file.path, contents: Data(bytes))
        if let location = try? AppLocation.find(file.path) { location.discard() }
    }

    /// The device gateway's messages: the first byte picks a registration body (read as the
    /// gateway reads it) or a notification line a device reads off its stream (then handed to
    /// Auth's notification reading, as the device hands it to the app).
    @Sendable static func gatewayMessage(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let data = Data(bytes.dropFirst())
        if first & 1 == 0 {
            guard let asked = try? JSONDecoder().decode(DeviceRegistration.self, from: data) else { return }
            _ = APNsEnvironment(rawValue: asked.environment)
            _ = asked.token.flatMap(DeviceToken.init(hex:))
        } else {
            guard let push = try? JSONDecoder().decode(GatewayPush.self, from: data),
                  let payload = try? NotificationPayload(json: Array((try? JSONEncoder().encode(push.payload)) ?? Data()))
            else { return }
            _ = AuthNotification.read(payload.userInfo)
        }
    }

    /// A folder of this process's own for the targets that read files.
    static let scratch: URL = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("authsim-fuzz-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }()

    /// Runs every file under `paths` (files or folders) through `target`. Returns how many ran.
    package static func replay(_ target: FuzzTarget, paths: [URL]) async -> Int {
        var count = 0
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path.path, isDirectory: &isDirectory) else { continue }
            let files = isDirectory.boolValue
                ? ((try? FileManager.default.contentsOfDirectory(at: path, includingPropertiesForKeys: nil)) ?? []).sorted { $0.path < $1.path }
                : [path]
            for file in files where !file.lastPathComponent.hasPrefix(".") {
                guard let data = try? Data(contentsOf: file) else { continue }
                await target(Array(data))
                count += 1
            }
        }
        return count
    }
}

/// The fuzzer's bytes as a stream of choices (zeros once they run out).
struct Choices {
    private let bytes: [UInt8]
    private var index = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    var exhausted: Bool { index >= bytes.count }
    mutating func next() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }
}

/// Builds JSON that always parses, from choices: the shape a structure-aware target needs.
struct JSONMaker {
    let fields: [String]

    /// Names no schema has, and names that trip naive parsers.
    static let strangeNames = ["unknownField", "", "__proto__", "constructor", "a.b", "tenantId\u{0}", "idToken ", "ÉTAT", "🔑"]
    static let numbers = ["0", "-0", "1", "-1", "1.5", "1e309", "-1e309", "1e-400", "123456789012345678901234567890", "9223372036854775808",
                          "-9223372036854775809", "4294967296", "3.4028235e38", "0.1e1", "2147483648"]
    static let strings = ["", "+16505551234", "+1", "ada@example.com", "password", "AIzaSyA-authsim-local-api-key-0000000",
                          "eyJhbGciOiJSUzI1NiJ9.e30.sig", "https://example.com/x", "PHONE_SMS", "TOTP", "sandbox", "\u{0}", "\u{FFFD}\u{10FFFF}"]

    func object(_ choices: inout Choices, depth: Int, into out: inout String) {
        out += "{"
        let count = Int(choices.next() % 8)
        for index in 0..<count {
            if index > 0 { out += "," }
            let pick = Int(choices.next())
            let name = fields.isEmpty ? Self.strangeNames[pick % Self.strangeNames.count] : fields[pick % fields.count]
            out += CompactJSON.string(name) + ":"
            value(&choices, depth: depth + 1, into: &out)
        }
        out += "}"
    }

    func value(_ choices: inout Choices, depth: Int, into out: inout String) {
        let kind = choices.next()
        switch depth > 24 ? kind % 6 : kind % 10 {
        case 0: out += "null"
        case 1: out += kind & 0x80 == 0 ? "true" : "false"
        case 2: out += Self.numbers[Int(choices.next()) % Self.numbers.count]
        case 3: out += CompactJSON.string(Self.strings[Int(choices.next()) % Self.strings.count])
        case 4:
            // Text from the choices themselves.
            let length = Int(choices.next() % 32)
            out += CompactJSON.string(String(decoding: (0..<length).map { _ in choices.next() }, as: UTF8.self))
        case 5: out += CompactJSON.string(String(repeating: "a", count: Int(choices.next()) * 512))
        case 6, 7: object(&choices, depth: depth, into: &out)
        case 8:
            out += "["
            let count = Int(choices.next() % 6)
            for index in 0..<count {
                if index > 0 { out += "," }
                value(&choices, depth: depth + 1, into: &out)
            }
            out += "]"
        default:
            // Deep nesting: up to 1,020 arrays.
            let levels = Int(choices.next()) * 4
            out += String(repeating: "[", count: levels) + String(repeating: "]", count: levels)
        }
    }
}
