import APNsReceiver
import APNsWire
import AuthBackend
import Crypto
import FirebaseAuthCore
import DeviceOS
import FirebaseCore
import Foundation
import IdentityToolkitAPI
import Scenarios

/// The parsers that take hostile input, each as a function of raw bytes that must return (never
/// crash, hang or allocate without bound) whatever the bytes are. Run by `authsim-fuzz` under
/// libFuzzer (Fuzz/run.sh) and, on the checked-in corpus and past crashes, by the tests.
package enum FuzzTargets {
    package static let all: [String: @Sendable ([UInt8]) -> Void] = [
        "provider-token": providerToken,
        "push-request": pushRequest,
        "payload": payload,
        "redirect-url": redirectURL,
        "plist": plist,
        "scenario-file": scenarioFile,
        "apple-token": appleToken,
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

    /// Runs every file under `paths` (files or folders) through `target`. Returns how many ran.
    package static func replay(_ target: @Sendable ([UInt8]) -> Void, paths: [URL]) -> Int {
        var count = 0
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path.path, isDirectory: &isDirectory) else { continue }
            let files = isDirectory.boolValue
                ? ((try? FileManager.default.contentsOfDirectory(at: path, includingPropertiesForKeys: nil)) ?? []).sorted { $0.path < $1.path }
                : [path]
            for file in files where !file.lastPathComponent.hasPrefix(".") {
                guard let data = try? Data(contentsOf: file) else { continue }
                target(Array(data))
                count += 1
            }
        }
        return count
    }
}
