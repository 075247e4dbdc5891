import Utilities
import AuthBackend
import FirebaseAuthCore
import Foundation
import LocalPKI
import Scenarios
import TestSupport
import Synchronization
import Testing

/// Makes a real `embedded.mobileprovision`: a plist with `Entitlements.aps-environment`, signed as
/// CMS (PKCS#7 SignedData, DER) by openssl with a throwaway certificate, as Apple's are.
func makeProvisioningProfile(apsEnvironment: String?, in folder: URL) async throws -> URL {
    let entitlements = apsEnvironment.map { "<key>aps-environment</key><string>\($0)</string>" } ?? ""
    let plist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0"><dict>
        <key>AppIDName</key><string>authsim</string>
        <key>Entitlements</key><dict>\(entitlements)<key>application-identifier</key><string>ABCDE12345.com.example.authsim</string></dict>
        <key>Name</key><string>authsim \(apsEnvironment ?? "none")</string>
        </dict></plist>
        """
    let source = folder.appendingPathComponent("profile-\(apsEnvironment ?? "none").plist")
    try plist.write(to: source, atomically: true, encoding: .utf8)
    let credentials = try CertsDirectory(folder.appendingPathComponent("Certs")).ensure()
    let output = folder.appendingPathComponent("embedded-\(apsEnvironment ?? "none").mobileprovision")
    let signed = try await runProgram(["openssl", "cms", "-sign", "-binary", "-nodetach", "-outform", "DER", "-in", source.path,
                                       "-signer", credentials.serverCertificateFile.path, "-inkey", credentials.serverKeyFile.path,
                                       "-out", output.path])
    guard signed.status == 0 else { throw CocoaError(.fileWriteUnknown) }
    return output
}

@Suite("The APNs token type, resolved from embedded.mobileprovision")
struct ProvisioningProfileTests {
    @Test("aps-environment is read out of a real CMS-signed profile")
    func readsCMS() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let development = try await makeProvisioningProfile(apsEnvironment: "development", in: folder)
        let production = try await makeProvisioningProfile(apsEnvironment: "production", in: folder)
        let none = try await makeProvisioningProfile(apsEnvironment: nil, in: folder)
        // The file really is DER, not a bare plist.
        #expect(try Data(contentsOf: development).first == 0x30)
        #expect(ProvisioningProfile.apsEnvironment(at: development) == "development")
        #expect(ProvisioningProfile.apsEnvironment(at: production) == "production")
        #expect(ProvisioningProfile.apsEnvironment(at: none) == nil)
        #expect(ProvisioningProfile.resolve(isSimulator: false, profile: development) == .sandbox)
        #expect(ProvisioningProfile.resolve(isSimulator: false, profile: production) == .prod)
        #expect(ProvisioningProfile.resolve(isSimulator: false, profile: none) == .prod)
        #expect(ProvisioningProfile.resolve(isSimulator: false, profile: nil) == .prod)
        #expect(ProvisioningProfile.resolve(isSimulator: false, profile: folder.appendingPathComponent("missing")) == .prod)
        #expect(ProvisioningProfile.resolve(isSimulator: true, profile: development) == .prod)
    }

    @Test(".unknown with a development profile: the token is sent as sandbox and sign-in works")
    func unknownResolvedToSandbox() async throws {
        try await withWorld { world, folder in
            var profile = AppProfile()
            profile.declaredTokenType = .unknown
            profile.provisioningProfile = .file(try await makeProvisioningProfile(apsEnvironment: "development", in: folder))
            let (auth, _) = try await world.install(profile)
            #expect(auth.apnsTokenType == .sandbox)
            let provider = PhoneAuthProvider.provider(auth: auth)
            let id = try await provider.verifyPhoneNumber(phone, uiDelegate: nil)
            let code = try #require(await world.lastCode(for: phone))
            _ = try await auth.signIn(with: provider.credential(withVerificationID: id, verificationCode: code))
        }
    }

    @Test(".unknown without a profile defaults to prod: a debug build's sandbox token never gets its push, and reCAPTCHA takes over, in the push's sign-in")
    func unknownDefaultsToProd() async throws {
        let clock = ManualClock()
        let events = Mutex<[(BackendEvent, SignInID?)]>([])
        try await withWorld(backendObserver: { event, signIn in events.withLock { $0.append((event, signIn)) } }) { world, _ in
            var profile = AppProfile()
            profile.declaredTokenType = .unknown
            profile.provisioningProfile = .none
            let (auth, _) = try await world.install(profile, clock: clock)
            #expect(auth.apnsTokenType == .prod)
            let attempt = Task { [provider = PhoneAuthProvider.provider(auth: auth)] in await verificationError(provider) }
            try await waitForSleepers(clock)
            clock.advance(by: .seconds(5))
            #expect(await attempt.value == nil)
            guard auth.lastAppVerification == .reCAPTCHA, let why = auth.lastFallbackReason else {
                Issue.record("no fallback")
                return
            }
            #expect(why.code == .noSilentPush, "\(why)")
            // The push and the fallback's code request are one sign-in: the backend tied the
            // reCAPTCHA token to the one push that got no code request.
            let steps = events.withLock { $0 }.filter { $0.0.isSignInStep }
            #expect(steps.map(\.0.kind) == ["pushing", "verifyClient", "codeRequested", "smsSent"])
            #expect(Set(steps.map(\.1)).count == 1 && steps.first?.1 != nil, "\(steps)")
        }
    }
}
