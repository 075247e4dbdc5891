import AuthBackend
import DeviceOS
import FirebaseAuthCore
import FirebaseCore
import Foundation
import HTTPTransport
import Scenarios
import Testing
import TestSupport

@Suite("Row 12: the SDK's request headers, and an API key restricted to iOS apps")
struct RequestHeaderTests {
    static let testNumber = "+16505554567"

    func options(_ world: PhoneAuthWorld, plistBundleID: String = "com.example.authsim") -> FirebaseOptions {
        let options = FirebaseOptions(googleAppID: "1:123456789012:ios:a1b2c3d4e5f60718", gcmSenderID: "123456789012")
        options.apiKey = world.apiKey
        options.projectID = world.projectID
        options.bundleID = plistBundleID
        return options
    }

    /// A test-number sign-in in test mode (sendVerificationCode, signInWithPhoneNumber, getAccountInfo).
    func signIn(_ auth: Auth) async throws(AuthError) {
        auth.settings?.isAppVerificationDisabledForTesting = true
        let provider = PhoneAuthProvider.provider(auth: auth)
        let id = try await AuthError.catching { try await provider.verifyPhoneNumber(Self.testNumber, uiDelegate: nil) }
        _ = try await AuthError.catching { try await auth.signIn(with: provider.credential(withVerificationID: id, verificationCode: "123456")) }
    }

    // AuthBackend.swift 81–106 (`request(for:httpMethod:contentType:requestConfiguration:)`).
    @Test("every API request carries Content-Type, X-Client-Version, the app's X-Ios-Bundle-Identifier, X-Firebase-GMPID and Accept-Language; X-Firebase-Locale only with a language code (AuthBackend.swift 81–106)")
    func headers() async throws {
        var configuration = BackendConfiguration()
        configuration.testPhoneNumbers = [Self.testNumber: "123456"]
        try await withWorld(configuration: configuration) { world, _ in
            let recording = RecordingTransport(world.transport)
            // GoogleService-Info.plist names another bundle than the app's: the header is Bundle.main's.
            let options = options(world, plistBundleID: "com.example.fromplist")
            let host = AppHost(AppHost.Configuration(bundleID: "com.example.authsim", urlSchemes: [options.encodedAppIDScheme], isSimulator: true, preferredLocalizations: ["fr-CA", "en"]), transport: recording)
            let auth = world.auth(options: options, host: host)
            // Outside test mode: the reCAPTCHA config (a GET) first, then the page (the web view's, no API headers).
            let provider = PhoneAuthProvider.provider(auth: auth)
            _ = try await provider.verifyPhoneNumber("+16505551234", uiDelegate: HeadlessPresenter())
            auth.languageCode = "de"
            try await signIn(auth)

            let api = recording.requests.withLock { $0 }.filter { $0.url.path.contains("identitytoolkit") || $0.url.path.contains("securetoken") }
            #expect(api.count >= 5, "\(recording.seen)")
            #expect(api.contains { $0.method == "GET" && $0.url.path.hasSuffix("/v2/recaptchaConfig") })
            for request in api {
                func value(_ name: String) -> [String] { request.headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value) }
                let call = request.url.lastPathComponent
                #expect(value("Content-Type") == ["application/json"], "\(call)")
                #expect(value("X-Client-Version") == ["iOS/FirebaseSDK/12.19.0/FirebaseCore-iOS"], "\(call)")
                #expect(value("X-Ios-Bundle-Identifier") == ["com.example.authsim"], "\(call)")
                #expect(value("X-Firebase-GMPID") == ["1:123456789012:ios:a1b2c3d4e5f60718"], "\(call)")
                #expect(value("Accept-Language") == ["fr-CA"], "\(call)")
                #expect(value("X-Firebase-AppCheck").isEmpty && value("X-Firebase-Client").isEmpty, "\(call)")
            }
            // X-Firebase-Locale from the moment the app sets languageCode.
            let localized = api.map { request in request.headers.first { $0.name == "X-Firebase-Locale" }?.value }
            let firstLocalized = try #require(localized.firstIndex { $0 != nil })
            #expect(localized[..<firstLocalized].allSatisfy { $0 == nil })
            #expect(localized[firstLocalized...].allSatisfy { $0 == "de" })
            // The page is the web view's request: none of the SDK's API headers.
            let page = try #require(recording.requests.withLock { $0 }.first { $0.url.path == "/__/auth/handler" })
            #expect(page.headers.isEmpty)
        }
    }

    /// Auth.swift 1420–1424: `useAppLanguage()` sets `languageCode` to `Locale.preferredLanguages.first`,
    /// the device's language, not the bundle's localization (which goes out as Accept-Language).
    @Test("useAppLanguage: the device's first language becomes languageCode, goes out as X-Firebase-Locale, and the SMS is in it")
    func useAppLanguage() async throws {
        try await withWorld { world, _ in
            let recording = RecordingTransport(world.transport)
            let options = options(world, plistBundleID: "com.example.authsim")
            let host = AppHost(AppHost.Configuration(bundleID: "com.example.authsim", urlSchemes: [options.encodedAppIDScheme], isSimulator: true, preferredLocalizations: ["en"], preferredLanguages: ["fr-FR", "en-US"]), transport: recording)
            let auth = world.auth(options: options, host: host)
            #expect(auth.languageCode == nil)
            auth.useAppLanguage()
            #expect(auth.languageCode == "fr-FR")
            let number = "+16505550199"
            _ = try await PhoneAuthProvider.provider(auth: auth).verifyPhoneNumber(number, uiDelegate: HeadlessPresenter())
            let sent = try #require(recording.requests.withLock { $0 }.last { $0.url.path.hasSuffix("/sendVerificationCode") })
            #expect(sent.headers.first { $0.name == "X-Firebase-Locale" }?.value == "fr-FR")
            let toolkit = try #require(world.toolkit)
            #expect(await toolkit.messages.last { $0.phoneNumber == number }?.text.hasSuffix("est votre code de validation.") == true)
        }
    }

    @Test("a key restricted to iOS apps: the listed app signs in; another bundle gets Google's 403, which the SDK reports as internalError with the message underneath")
    func iosRestriction() async throws {
        var configuration = BackendConfiguration()
        configuration.testPhoneNumbers = [Self.testNumber: "123456"]
        configuration.apiKeyIOSBundleIDs = ["com.example.authsim"]
        try await withWorld(configuration: configuration) { world, folder in
            let options = options(world)
            let listed = world.auth(options: options, host: AppHost(AppHost.Configuration(bundleID: "com.example.authsim", urlSchemes: [options.encodedAppIDScheme]), transport: world.transport))
            try await signIn(listed)
            #expect(listed.currentUser?.phoneNumber == Self.testNumber)

            // The same GoogleService-Info.plist in another app (a clone, an extension, a renamed target).
            let other = world.auth(options: options, host: AppHost(AppHost.Configuration(bundleID: "com.example.clone", urlSchemes: [options.encodedAppIDScheme]), transport: world.transport))
            do throws(AuthError) {
                try await signIn(other)
                Issue.record("a bundle outside the key's restriction signed in")
            } catch {
                #expect(error.code == .internalError)
                let bridged = error as NSError
                #expect(bridged.localizedDescription == "An internal error has occurred, print and inspect the error details for more information.")
                let inner = try #require(bridged.userInfo[NSUnderlyingErrorKey] as? NSError)
                #expect(inner.domain == "FIRAuthInternalErrorDomain" && inner.code == 3)
                let answer = try #require(inner.userInfo["FIRAuthErrorUserInfoDeserializedResponseKey"] as? [String: Any])
                #expect(answer["message"] as? String == "Requests from this iOS client application com.example.clone are blocked.")
                #expect(answer["status"] as? String == "PERMISSION_DENIED")
                let details = try #require(answer["details"] as? [[String: Any]])
                #expect(details.first?["reason"] as? String == "API_KEY_IOS_APP_BLOCKED")
                #expect((inner.userInfo[NSUnderlyingErrorKey] as? NSError)?.code == 403)
            }

            // A REST client without the header: <empty>, as the service writes it.
            guard await toolAvailable(["curl", "--version"]) else { return }
            let url = "\(world.backendURL)/www.googleapis.com/identitytoolkit/v3/relyingparty/sendVerificationCode?key=\(world.apiKey)"
            let bare = try await runProgram(["curl", "-s", "-X", "POST", "-H", "Content-Type: application/json", "-d", "{}", url])
            #expect(bare.output.contains("Requests from this iOS client application <empty> are blocked."), "\(bare.output)")
            _ = folder
        }
    }
}
