import Foundation
import Testing
import TestSupport

/// What an app's code sees through `import FirebaseAuth` and `import FirebaseCore`: snippets
/// type-checked by swiftc against the modules this build made, with the flags SwiftPM gave this
/// target (read from the build's `debug.yaml`). The SDK's names compile; authsim's own do not,
/// and the calls it does not simulate fail with a message that says so.
@Suite("import FirebaseAuth and import FirebaseCore: the SDK's names, and nothing of authsim's")
struct ModuleSurface {
    /// Type-checks `source` as a file of an app's own module; returns swiftc's status and messages.
    /// - Parameter swiftVersion: the language mode (an Xcode app target's default is 5), else this target's.
    /// With `sil`, SIL is made too: region-based isolation ("sending … risks causing data races")
    /// is checked there, not by `-typecheck`.
    static func typecheck(_ source: String, _ name: String = #function, swiftVersion: String? = nil, sil: Bool = false) async throws -> (status: Int32, messages: String) {
        let folder = temporaryDirectory("surface-\(name.filter(\.isLetter))")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("App.swift")
        try Data(source.utf8).write(to: file)
        let flags = folder.appendingPathComponent("flags")
        var words = try importFlags()
        if let swiftVersion, let index = words.firstIndex(of: "-swift-version"), index + 1 < words.endIndex { words[index + 1] = swiftVersion }
        try Data(words.map(quoted).joined(separator: "\n").utf8).write(to: flags)
        let result = try await runProgram(["sh", "-c", "swiftc \(sil ? "-emit-sil -o /dev/null" : "-typecheck") -module-name App @\(flags.path) \(file.path) 2>&1"])
        return (result.status, result.output)
    }

    /// A response-file word, quoted.
    static func quoted(_ word: String) -> String { "\"" + word.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }

    /// The module search flags SwiftPM used to compile this target (`-I`, `-Xcc`, `-target`,
    /// `-swift-version`, `-module-cache-path`, `-D`), from the build description beside the build.
    static func importFlags() throws -> [String] {
        var products = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        if products.lastPathComponent.hasSuffix(".xctest") { products = products.deletingLastPathComponent() }
        // <scratch>/<triple>/debug → <scratch>/debug.yaml
        let description = products.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("debug.yaml")
        let text = try String(contentsOf: description, encoding: .utf8)
        guard let start = text.range(of: "\"C.GuideCodeTests-"),
              let argsLine = text[start.upperBound...].split(separator: "\n").first(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix("args:") }),
              let json = argsLine.firstIndex(of: "["),
              let args = try JSONSerialization.jsonObject(with: Data(argsLine[json...].utf8)) as? [String]
        else { throw GuideError("no compile command for GuideCodeTests in \(description.path)") }
        var flags: [String] = []
        var index = args.startIndex
        while index < args.endIndex {
            let arg = args[index]
            if ["-I", "-Xcc", "-target", "-swift-version", "-module-cache-path", "-D", "-sdk"].contains(arg), index + 1 < args.endIndex {
                flags += [arg, args[index + 1]]
                index += 2
            } else {
                index += 1
            }
        }
        return flags
    }

    @Test("the guides' calls compile with the SDK's two imports (the control for the checks below)")
    func sdkNamesCompile() async throws {
        let result = try await Self.typecheck("""
            import FirebaseAuth
            import FirebaseCore
            import Foundation

            func signIn(_ phone: String, code: String) async throws -> String {
                FirebaseApp.configure()
                let options = FirebaseOptions(googleAppID: "1:1:ios:1", gcmSenderID: "1")
                options.apiKey = "key"
                _ = FirebaseApp.app(name: "other")?.options.projectID
                Auth.auth().settings?.isAppVerificationDisabledForTesting = false
                Auth.auth().languageCode = "fr"
                let id = try await PhoneAuthProvider.provider().verifyPhoneNumber(phone, uiDelegate: nil)
                let credential = PhoneAuthProvider.provider().credential(withVerificationID: id, verificationCode: code)
                do {
                    return try await Auth.auth().signIn(with: credential).user.uid
                } catch {
                    let error = error as NSError
                    guard error.code == AuthErrorCode.secondFactorRequired.rawValue,
                          let resolver = error.userInfo[AuthErrorUserInfoMultiFactorResolverKey] as? MultiFactorResolver,
                          let hint = resolver.hints.first as? PhoneMultiFactorInfo
                    else { throw error }
                    let second = try await PhoneAuthProvider.provider().verifyPhoneNumber(with: hint, uiDelegate: nil, multiFactorSession: resolver.session)
                    let assertion = PhoneMultiFactorGenerator.assertion(with: PhoneAuthProvider.provider().credential(withVerificationID: second, verificationCode: code))
                    return try await resolver.resolveSignIn(with: assertion).user.uid
                }
            }

            func apple(_ token: String, _ nonce: String) {
                let credential = OAuthProvider.appleCredential(withIDToken: token, rawNonce: nonce, fullName: nil)
                Auth.auth().signIn(with: credential) { result, error in _ = result?.additionalUserInfo?.isNewUser }
                _ = Auth.auth().canHandle(URL(string: "app-1-1-ios-1://firebaseauth/link")!)
                _ = Auth.auth().canHandleNotification([:])
                Auth.auth().setAPNSToken(Data(), type: .unknown)
            }
            """)
        #expect(result.status == 0, "\(result.messages)")
    }

    @Test("import FirebaseAuth alone brings Foundation, as the SDK's module does; import Firebase brings FirebaseCore and FirebaseAuth")
    func imports() async throws {
        let authOnly = try await Self.typecheck("""
            import FirebaseAuth

            func check(_ error: Error, _ url: URL, _ token: Data) -> Bool {
                Auth.auth().setAPNSToken(token, type: .unknown)
                return (error as NSError).code == AuthErrorCode.invalidVerificationCode.rawValue && Auth.auth().canHandle(url)
            }
            """)
        #expect(authOnly.status == 0, "\(authOnly.messages)")
        let umbrella = try await Self.typecheck("""
            import Firebase

            func start() async throws -> String? {
                FirebaseApp.configure()
                let id = try await PhoneAuthProvider.provider().verifyPhoneNumber("+16505551234", uiDelegate: nil)
                if let result = try await Auth.auth().currentUser?.getIDTokenResult(forcingRefresh: true),
                   result.claims["admin"] as? Bool == true, result.expirationDate > Date() {
                    return result.signInProvider
                }
                Auth.auth().currentUser?.getIDTokenResult { result, error in _ = (result?.authDate, (error as NSError?)?.code) }
                let change = Auth.auth().currentUser?.createProfileChangeRequest()
                change?.displayName = "Ada"
                change?.photoURL = URL(string: "https://example.com/ada.png")
                try await change?.commitChanges()
                _ = try await Auth.auth().currentUser?.unlink(fromProvider: "apple.com")
                Auth.auth().currentUser?.unlink(fromProvider: "phone") { user, error in _ = (user?.uid, error) }
                return Auth.auth().currentUser?.uid ?? id
            }
            """)
        #expect(umbrella.status == 0, "\(umbrella.messages)")
    }

    @Test("an app's auth service as apps write it: a state listener kept in a handle, removed in deinit (Swift 5 and 6 modes)",
          arguments: ["5", "6"])
    func listenerService(_ mode: String) async throws {
        let result = try await Self.typecheck("""
            import FirebaseAuth

            @MainActor
            final class AuthService {
                private var handle: AuthStateDidChangeListenerHandle?
                private var tokenHandle: IDTokenDidChangeListenerHandle?
                private(set) var user: User?
                private(set) var isSignedIn = false

                func start() {
                    handle = Auth.auth().addStateDidChangeListener { [weak self] _, user in
                        self?.user = user
                        self?.isSignedIn = user != nil
                    }
                    tokenHandle = Auth.auth().addIDTokenDidChangeListener { _, user in _ = user?.uid }
                }

                func stop() {
                    if let handle { Auth.auth().removeStateDidChangeListener(handle) }
                    if let tokenHandle { Auth.auth().removeIDTokenDidChangeListener(tokenHandle) }
                }

                func signOut() throws { try Auth.auth().signOut() }
            }
            """, swiftVersion: mode)
        #expect(result.status == 0, "\(result.messages)")
    }

    /// authsim's own names, and what only typed errors would allow, each of which must fail to
    /// compile through the SDK's two imports.
    static let authsimNames = [
        "_ = Auth.auth().lastAppVerification",
        "_ = Auth.auth().lastFallbackReason",
        "_ = Auth.auth().cachedCredential",
        "_ = Auth.auth().pendingReceipts",
        "_ = Auth.auth().host",
        "Auth.auth().processWasKilled()",
        "_ = FirebaseApp.app()?.host",
        "_ = AuthErrorCode.invalidVerificationCode.errorDescription",
        "_ = HeadlessPresenter()",
        "_ = AppProcess.self",
        "_ = AppBundle.self",
        "_ = AuthError.self",
        "_ = AppleNonce.random()",
        "_ = FirebaseOptions(googleAppID: \"1:1:ios:1\", gcmSenderID: \"1\").encodedAppIDScheme",
        "FirebaseApp.configure(options: FirebaseOptions(googleAppID: \"1:1:ios:1\", gcmSenderID: \"1\"), host: AppHost(AppHost.Configuration(bundleID: \"a\", urlSchemes: [])))",
        // The SDK's async calls throw untyped errors: `error.code` needs `as NSError`, as on iOS.
        "Task { do { _ = try await Auth.auth().signIn(with: PhoneAuthProvider.provider().credential(withVerificationID: \"v\", verificationCode: \"1\")) } catch { _ = error.code } }",
        "Task { do { _ = try await PhoneAuthProvider.provider().verifyPhoneNumber(\"+1\", uiDelegate: nil) } catch { _ = error.code } }",
    ]

    @Test("authsim's own names do not compile through the SDK's imports: swiftc reports an error on each one's line")
    func authsimNamesDoNot() async throws {
        // One file, one function per name (swiftc type-checks every function and reports each
        // error with its line): one compiler run rather than fifteen on a busy machine.
        let header = "import FirebaseAuth\nimport FirebaseCore\n"
        let functions = Self.authsimNames.enumerated().map { "func use\($0.offset)() {\n    \($0.element)\n}" }
        let result = try await Self.typecheck(header + functions.joined(separator: "\n"))
        #expect(result.status != 0)
        for (index, line) in Self.authsimNames.enumerated() {
            // header: 2 lines; each function: 3 lines, the name on its second.
            let lineNumber = 2 + index * 3 + 2
            #expect(result.messages.contains("App.swift:\(lineNumber):"), "compiled through FirebaseAuth/FirebaseCore: \(line)")
        }
    }

    @Test("a call the SDK has and authsim does not simulate fails to compile, saying it is not simulated; email links compile")
    func unsimulatedCalls() async throws {
        // Email links, as FirebaseAuth 12.19 spells them (Auth.swift 451–490, 1221–1299; EmailAuthProvider.swift).
        let links = try await Self.typecheck("""
            import FirebaseAuth

            func app(settings: ActionCodeSettings, user: User) async throws {
                try await Auth.auth().sendSignInLink(toEmail: "a@example.com", actionCodeSettings: settings)
                Auth.auth().sendSignInLink(toEmail: "a@example.com", actionCodeSettings: settings) { error in _ = error }
                guard Auth.auth().isSignIn(withEmailLink: "https://example.com/?mode=signIn&oobCode=x") else { return }
                let result: AuthDataResult = try await Auth.auth().signIn(withEmail: "a@example.com", link: "https://example.com/?oobCode=x")
                Auth.auth().signIn(withEmail: "a@example.com", link: "l") { result, error in _ = (result, error) }
                _ = try await user.link(with: EmailAuthProvider.credential(withEmail: "a@example.com", link: "l"))
                _ = result
            }
            """)
        #expect(links.status == 0, "\(links.messages)")

        // Game Center: the SDK's type name, unavailable, saying why.
        let others = try await Self.typecheck("""
            import FirebaseAuth

            func gameCenter() async throws -> AuthCredential { try await GameCenterAuthProvider.getCredential() }
            """, "unsimulatedProviders")
        #expect(others.status != 0)
        #expect(others.messages.contains("Game Center sign-in needs a device's Game Center"), "\(others.messages)")
    }

    /// An app's email auth service as apps write it (the shapes of the issue's 13 files that did not
    /// compile: email and password beside anonymous sign-in, the reset and verification emails, a
    /// password change, errors read as NSError), in Swift 5 mode as an Xcode app target compiles it,
    /// through `import Firebase` alone.
    @Test("an app's email and password service type-checks unchanged through import Firebase, in Swift 5 mode")
    func emailService() async throws {
        let result = try await Self.typecheck("""
            import Firebase

            final class EmailAuthService {
                var handle: AuthStateDidChangeListenerHandle?
                func start() {
                    handle = Auth.auth().addStateDidChangeListener { _, user in
                        print(user?.email ?? "signed out", user?.isAnonymous ?? false)
                    }
                }
                func signUp(email: String, password: String) async throws -> User {
                    let result = try await Auth.auth().createUser(withEmail: email, password: password)
                    try await result.user.sendEmailVerification()
                    return result.user
                }
                func signIn(email: String, password: String, completion: @escaping (Error?) -> Void) {
                    Auth.auth().signIn(withEmail: email, password: password) { result, error in
                        if let error = error as NSError?, AuthErrorCode(rawValue: error.code) == .wrongPassword {
                            completion(error)
                            return
                        }
                        completion(error)
                    }
                }
                func guest() async throws { _ = try await Auth.auth().signInAnonymously() }
                func upgrade(email: String, password: String) async throws {
                    let credential = EmailAuthProvider.credential(withEmail: email, password: password)
                    try await Auth.auth().currentUser?.link(with: credential)
                }
                func forgot(_ email: String) {
                    Auth.auth().sendPasswordReset(withEmail: email) { error in print(error?.localizedDescription ?? "sent") }
                }
                func reset(code: String, to password: String) async throws {
                    let email = try await Auth.auth().verifyPasswordResetCode(code)
                    print(email)
                    try await Auth.auth().confirmPasswordReset(withCode: code, newPassword: password)
                }
                func change(to password: String, current: String) async throws {
                    guard let user = Auth.auth().currentUser, let email = user.email else { return }
                    try await user.reauthenticate(with: EmailAuthProvider.credential(withEmail: email, password: current))
                    try await user.updatePassword(to: password)
                }
                func verify(_ code: String) async throws {
                    try await Auth.auth().applyActionCode(code)
                    try await Auth.auth().currentUser?.reload()
                }
                func custom(_ token: String) async throws { _ = try await Auth.auth().signIn(withCustomToken: token) }
                var hasPhone: Bool { Auth.auth().currentUser?.providerData.contains { $0.providerID == PhoneAuthProvider.id } ?? false }
                var hasPassword: Bool { Auth.auth().currentUser?.providerData.contains { $0.providerID == EmailAuthProvider.id } ?? false }
                func stop() {
                    if let handle { Auth.auth().removeStateDidChangeListener(handle) }
                }
            }
            """, swiftVersion: "5")
        #expect(result.status == 0, "\(result.messages)")
    }

    // MARK: The surface against FirebaseAuth 12.19's

    /// Members every SDK type has without declaring them: an `NSObject`'s `description`, `hash`
    /// (`hash(into:)`, `hashValue` as Swift's `Hashable` sees it), a raw-value enum's
    /// `init(rawValue:)` and `rawValue`.
    static let implicitMembers: Set<String> = ["description", "hash(into:)", "hashValue", "init(rawValue:)", "rawValue",
                                               // NSObject's and NSCopying's (FIROptions is NSCopying)
                                               "hash", "isEqual(_:)", "copy(with:)",
                                               // Foundation's, on every Error (AuthErrorCode is one, as in 12.19)
                                               "localizedDescription"]

    /// Public declarations of `import FirebaseAuth` that FirebaseAuth 12.19's Swift API does not
    /// have, each kept on purpose, with why (docs/app-code-on-linux.md).
    static let keptDifferences: [String: String] = [
        "AuthErrorCode.appConfigurationError":
            "17998: where the SDK stops with fatalError (an unregistered URL scheme, an empty emulator host, a malformed answer), this throws, saying what to fix",
        "AuthUIDelegate.present(_:host:)":
            "UIKit's present(_:animated:completion:) takes a UIViewController, which Linux does not have: the delegate is handed the page's URL and the app",
    ]

    /// The repository's root.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A list of Tests/SDKSurface (made by Scripts/sdk-swift-api.py): its lines, comments left out.
    static func sdkList(_ file: String) throws -> Set<String> {
        let list = try String(contentsOf: root.appendingPathComponent("Tests/SDKSurface/\(file)"), encoding: .utf8)
        return Set(list.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") && !$0.isEmpty })
    }

    /// The auth core's public symbols (swift-symbolgraph-extract, SPI left out) under the names
    /// FirebaseAuth re-exports, as `Type.member(labels:)`.
    static func exportedSymbols() async throws -> Set<String> { try await exportedGraph().symbols }

    /// The auth core's symbols under the names FirebaseAuth re-exports, and those types'
    /// conformances and superclasses as `Type: Protocol` (the protocol's or class's last name).
    static func exportedGraph() async throws -> (symbols: Set<String>, conformances: Set<String>) {
        let reexports = try String(contentsOf: Self.root.appendingPathComponent("Sources/FirebaseAuth/FirebaseAuth.swift"), encoding: .utf8)
        let exported = Set(reexports.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("@_exported import "), let dot = line.range(of: "FirebaseAuthCore.") else { return nil }
            return String(line[dot.upperBound...])
        })
        return try await symbolGraph(of: "FirebaseAuthCore") { exported.contains($0) }
    }

    /// A module's public symbols (SPI left out) whose first path component `keep` takes, as
    /// `Type.member(labels:)`.
    static func symbols(of module: String, keep: (String) -> Bool) async throws -> Set<String> {
        try await symbolGraph(of: module, keep: keep).symbols
    }

    /// A module's public symbols (as ``symbols(of:keep:)``) and its types' conformances.
    static func symbolGraph(of module: String, keep: (String) -> Bool) async throws -> (symbols: Set<String>, conformances: Set<String>) {
        let folder = temporaryDirectory("symbolgraph")
        defer { try? FileManager.default.removeItem(at: folder) }
        var words: [String] = []
        var flags = try importFlags()[...]
        while let word = flags.popFirst() {
            // The extractor takes the search paths and target, not the compiler's language mode or conditions.
            if word == "-swift-version" || word == "-D" { _ = flags.popFirst(); continue }
            words.append(word)
        }
        let response = folder.appendingPathComponent("flags")
        try Data(words.map(quoted).joined(separator: "\n").utf8).write(to: response)
        let run = try await runProgram(["sh", "-c", "swift-symbolgraph-extract -module-name \(module) -output-dir \(folder.path) @\(response.path) 2>&1"])
        guard run.status == 0 else { throw GuideError("swift-symbolgraph-extract failed: \(run.output)") }
        struct Graph: Decodable {
            struct Symbol: Decodable {
                struct Kind: Decodable { let identifier: String }
                let pathComponents: [String]
                let identifier: Identifier
                struct Location: Decodable { let uri: String }
                let kind: Kind
                let isSynthesized: Bool?
                /// Where the module's source declares it: none for what a conformance brings from
                /// another module's protocol extension (an `AsyncSequence`'s `map(_:)`).
                let location: Location?
            }
            struct Identifier: Decodable { let precise: String }
            struct Relationship: Decodable {
                let kind: String
                let source: String
                let target: String
                let targetFallback: String?
            }
            let symbols: [Symbol]
            let relationships: [Relationship]
        }
        let graph = try JSONDecoder().decode(Graph.self, from: Data(contentsOf: folder.appendingPathComponent("\(module).symbols.json")))
        var types: [String: String] = [:]
        for symbol in graph.symbols where symbol.pathComponents.first.map(keep) == true && symbol.kind.identifier.hasPrefix("swift.") {
            if ["swift.class", "swift.struct", "swift.enum", "swift.protocol"].contains(symbol.kind.identifier) {
                types[symbol.identifier.precise] = symbol.pathComponents.joined(separator: ".")
            }
        }
        let conformances = Set(graph.relationships.compactMap { relation -> String? in
            guard ["conformsTo", "inheritsFrom"].contains(relation.kind), let type = types[relation.source] else { return nil }
            let target = relation.targetFallback.flatMap { $0.split(separator: ".").last.map(String.init) }
                ?? types[relation.target].flatMap { $0.split(separator: ".").last.map(String.init) } ?? relation.target
            return "\(type): \(target)"
        })
        return (Set(graph.symbols.compactMap { symbol -> String? in
            guard let type = symbol.pathComponents.first, keep(type), symbol.isSynthesized != true, symbol.location != nil,
                  symbol.kind.identifier != "swift.func.op" else { return nil }
            return symbol.pathComponents.joined(separator: ".")
        }), conformances)
    }

    /// The list is data (Tests/SDKSurface), made from the SDK's sources at the contract's commit by
    /// Scripts/sdk-swift-api.py: FirebaseAuth/Sources/Swift (public and open declarations) and
    /// FirebaseAuth/Sources/Public (NS_SWIFT_NAME).
    @Test("every public declaration of import FirebaseAuth is one FirebaseAuth 12.19 offers Swift (or a difference kept on purpose)")
    func surfaceIsTheSDKs() async throws {
        let sdk = try Self.sdkList("firebaseauth-12.19-swift-api.txt")
        #expect(sdk.count > 400, "the list has \(sdk.count) declarations")
        let ours = try await Self.exportedSymbols()
        #expect(ours.count > 300, "\(ours.count) symbols: the extraction found the module")
        let extra = ours.filter { name in
            !sdk.contains(name) && Self.keptDifferences[name] == nil
                && !Self.implicitMembers.contains(String(name.split(separator: ".", maxSplits: 1).last ?? ""))
        }
        #expect(extra.isEmpty, "not in FirebaseAuth 12.19's Swift API: \(extra.sorted())")
        // Every kept difference is still a declaration here (a stale entry would hide nothing).
        for name in Self.keptDifferences.keys { #expect(ours.contains(name), "\(name) is kept as a difference but is no longer declared") }
    }

    /// The list's declarations `import FirebaseAuth` does not offer, each group with why: what
    /// needs what Linux does not have, or is not an app's API (``refused``), and what is not
    /// simulated yet, with the issue that brings it (``notYet``). Both shrink only: a name that
    /// becomes a declaration must leave its list.
    static let refused: [String: [String]] = [
        "UIApplicationDelegate and UISceneDelegate methods: they take UIApplication and UIScene, which Linux does not have; call what they call, setAPNSToken(_:type:), canHandleNotification(_:) and canHandle(_:)": [
            "Auth.application(_:didFailToRegisterForRemoteNotificationsWithError:)", "Auth.application(_:didReceiveRemoteNotification:fetchCompletionHandler:)",
            "Auth.application(_:didRegisterForRemoteNotificationsWithDeviceToken:)", "Auth.application(_:open:options:)", "Auth.scene(_:openURLContexts:)"],
        "AuthUIDelegate's UIKit methods take a UIViewController: present(_:host:) stands for them": [
            "AuthUIDelegate.present(_:animated:completion:)", "AuthUIDelegate.dismiss(animated:completion:)"],
        "Game Center sign-in needs GameKit's signed identity from Apple's servers: declared unavailable with that message": [
            "GameCenterAuthProvider", "GameCenterAuthProvider.getCredential()", "GameCenterAuthProvider.getCredential(completion:)",
            "GameCenterAuthProvider.id", "GameCenterAuthProvider.init()"],
        "public only in the SDK's own CI builds (#if FIREBASE_CI); an app's build has it internal": ["Auth.mainBundleUrlTypes"],
        "unavailable in 12.19 too (@available(*, unavailable), \"This class is not meant to be initialized.\"), as here; the symbol graph leaves unavailable declarations out": [
            "FacebookAuthProvider.init()", "GitHubAuthProvider.init()", "GoogleAuthProvider.init()", "TwitterAuthProvider.init()"],
    ]
    static let notYet: [String: [String]] = [:]
    /// Names the symbol graph leaves out (a leading underscore), each with a line that uses it.
    static let underscored: [String: String] = [
        "User.__sendEmailVerification(withCompletion:)": "user.__sendEmailVerification(withCompletion: nil)",
        "User.__sendEmailVerificationBeforeUpdating(email:completion:)": "user.__sendEmailVerificationBeforeUpdating(email: \"a@b.c\", completion: nil)",
    ]

    @Test("every declaration of FirebaseAuth 12.19's Swift API is in import FirebaseAuth, or listed as refused or not yet simulated, with why")
    func noLessThanTheSDKs() async throws {
        let sdk = try Self.sdkList("firebaseauth-12.19-swift-api.txt")
        let ours = try await Self.exportedSymbols()
        let refused = Set(Self.refused.values.joined()), notYet = Set(Self.notYet.values.joined())
        #expect(refused.isDisjoint(with: notYet))
        let missing = sdk.subtracting(ours).subtracting(refused).subtracting(notYet).subtracting(Self.underscored.keys)
        #expect(missing.isEmpty, "FirebaseAuth 12.19 has these and import FirebaseAuth does not: \(missing.sorted())")
        // The lists hold only what is missing, and only the list's names.
        #expect(refused.union(notYet).intersection(ours).isEmpty, "declared now, still listed: \(refused.union(notYet).intersection(ours).sorted())")
        #expect(refused.union(notYet).subtracting(sdk).isEmpty, "not FirebaseAuth 12.19's: \(refused.union(notYet).subtracting(sdk).sorted())")
        // The underscored names compile.
        let uses = Self.underscored.values.map { "    \($0)" }.joined(separator: "\n")
        let result = try await Self.typecheck("import FirebaseAuth\nfunc use(_ user: User) {\n\(uses)\n}\n")
        #expect(result.status == 0, "\(result.messages)")
    }

    /// Where a type's conformances are not yet 12.19's, by reason (issue 65: types as the SDK
    /// declares them). Shrinks only: a conformance that becomes the SDK's must leave it.
    static let conformancesNotYet: [String: [String]] = [:]

    /// The conformances the list holds (`Scripts/sdk-swift-api.py --conformances`), of the kinds
    /// whose difference an app's code sees: `Equatable` and `Hashable` are left out, which raw-value
    /// enums and `NSObject`s have without declaring them.
    static let comparedConformances: Set<String> = ["NSObject", "Sendable", "NSSecureCoding", "NSCopying", "Error", "AsyncSequence", "AsyncIteratorProtocol"]

    @Test("the conformances of FirebaseAuth 12.19's public types (Sendable, NSObject, NSSecureCoding, NSCopying, …) are ours, or listed with why")
    func conformancesAreTheSDKs() async throws {
        func proto(_ line: String) -> String { String(line.split(separator: ": ").last ?? "") }
        func type(_ line: String) -> String { String(line.split(separator: ":").first ?? "") }
        var sdk = try Self.sdkList("firebaseauth-12.19-conformances.txt").filter { Self.comparedConformances.contains(proto($0)) }
        // An Error is Sendable (Error refines it).
        sdk.formUnion(sdk.filter { proto($0) == "Error" }.map { "\(type($0)): Sendable" })
        #expect(sdk.count > 40)
        let graph = try await Self.exportedGraph()
        let ours = graph.conformances.filter { Self.comparedConformances.contains(proto($0)) }
        let declared = graph.symbols
        let missing = sdk.filter { declared.contains(type($0)) }.subtracting(ours)
        // A subclass that overrides a protocol's requirements (PhoneMultiFactorInfo's encode(with:))
        // shows its superclass's conformance in the symbol graph; the SDK's list, read from its
        // declarations, has it on the superclass only.
        let superclasses = Dictionary(grouping: graph.conformances, by: type).mapValues { Set($0.map(proto)) }
        let inherited = ours.filter { line in superclasses[type(line), default: []].contains { sdk.contains("\($0): \(proto(line))") } }
        let extra = ours.subtracting(sdk).subtracting(inherited)
        let listed = Set(Self.conformancesNotYet.values.joined())
        #expect(missing.subtracting(listed).isEmpty, "12.19 declares these and ours do not: \(missing.subtracting(listed).sorted())")
        #expect(extra.subtracting(listed).isEmpty, "ours declare these and 12.19's do not: \(extra.subtracting(listed).sorted())")
        #expect(listed.subtracting(missing.union(extra)).isEmpty, "listed, but now as the SDK's: \(listed.subtracting(missing.union(extra)).sorted())")
    }

    /// 12.19's completion and listener types: plain closures (Auth.swift, User.swift, MultiFactor.swift),
    /// `@MainActor` only for `verifyPhoneNumber`'s two (PhoneAuthProvider.swift 60, 79).
    @Test("Swift 6: main-actor code called from a listener or completion is the error Xcode gives with 12.19; from verifyPhoneNumber's @MainActor completion it compiles")
    func closureIsolation() async throws {
        let header = """
            import FirebaseAuth
            @MainActor final class Screen { var text = ""; func show(_ value: String) { text = value } }

            """
        let refused = try await Self.typecheck(header + """
            func listen(_ screen: Screen) {
                _ = Auth.auth().addStateDidChangeListener { _, user in screen.show(user?.uid ?? "") }
                Auth.auth().signInAnonymously { result, _ in screen.show(result?.user.uid ?? "") }
            }
            """, swiftVersion: "6")
        #expect(refused.status != 0)
        #expect(refused.messages.components(separatedBy: "call to main actor-isolated instance method 'show' in a synchronous nonisolated context").count - 1 >= 2,
                "\(refused.messages)")
        let accepted = try await Self.typecheck(header + """
            func send(_ screen: Screen) {
                PhoneAuthProvider.provider().verifyPhoneNumber("+16505551234", uiDelegate: nil) { id, _ in screen.show(id ?? "") }
                _ = Auth.auth().addStateDidChangeListener { _, user in
                    let uid = user?.uid ?? ""
                    MainActor.assumeIsolated { screen.show(uid) }
                }
            }
            """, swiftVersion: "6")
        #expect(accepted.status == 0, "\(accepted.messages)")
    }

    @Test("Swift 6: an Auth, a User or an AuthUIDelegate sent to an actor and used after is the error Xcode gives with 12.19 (none is Sendable); Swift 5 builds it")
    func sendingAcrossActors() async throws {
        let code = """
            import FirebaseAuth
            actor Store { func keep(_ auth: Auth) {}; func keep(_ user: User) {}; func keep(_ presenter: any AuthUIDelegate) {} }
            func hand(_ store: Store) async {
                let auth = Auth.auth()
                await store.keep(auth)
                _ = auth.currentUser
            }
            func hand(_ store: Store, _ user: User) async {
                await store.keep(user)
                _ = user.uid
            }
            func hand(_ store: Store, _ presenter: any AuthUIDelegate) async {
                await store.keep(presenter)
                _ = presenter
            }
            """
        let swift6 = try await Self.typecheck(code, swiftVersion: "6", sil: true)
        #expect(swift6.status != 0)
        for name in ["auth", "user", "presenter"] {
            #expect(swift6.messages.contains("sending '\(name)' risks causing data races"), "\(swift6.messages)")
        }
        let swift5 = try await Self.typecheck(code, swiftVersion: "5", sil: true)
        #expect(swift5.status == 0, "\(swift5.messages)")
    }

    /// FirebaseCore's list comes from its Objective-C headers (FirebaseCore/Sources/Public), by the
    /// same script with `--core`.
    @Test("every public declaration of import FirebaseCore is one FirebaseCore 12.19 offers Swift")
    func coreSurfaceIsTheSDKs() async throws {
        let sdk = try Self.sdkList("firebasecore-12.19-swift-api.txt")
        #expect(sdk.contains("FirebaseApp.configure()") && sdk.contains("FirebaseOptions.init(googleAppID:gcmSenderID:)"))
        let ours = try await Self.symbols(of: "FirebaseCore") { _ in true }
        #expect(ours.contains("FirebaseApp.configure()"), "\(ours.sorted())")
        let extra = ours.filter { name in
            !sdk.contains(name) && !Self.implicitMembers.contains(String(name.split(separator: ".", maxSplits: 1).last ?? ""))
        }
        #expect(extra.isEmpty, "not in FirebaseCore 12.19's Swift API: \(extra.sorted())")
    }

    @Test("the Apple guide's withProviderID:IDToken: spelling (Objective-C only in 12.19) is refused with the Swift name")
    func objectiveCSpelling() async throws {
        let result = try await Self.typecheck("""
            import FirebaseAuth

            func reauthenticate(_ idToken: String, _ nonce: String) -> AuthCredential {
                OAuthProvider.credential(withProviderID: "apple.com", IDToken: idToken, rawNonce: nonce)
            }
            """)
        #expect(result.status != 0)
        #expect(result.messages.contains("credential(providerID: .apple, idToken:rawNonce:)"), "\(result.messages)")
    }
}
