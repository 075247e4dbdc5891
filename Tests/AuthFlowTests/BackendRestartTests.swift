@testable import AuthBackend
import IdentityToolkitAPI
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TestSupport
import Testing

/// `authsim backend` killed with SIGKILL between every step of a sign-in and started again on the
/// same state folder: each step still works with what the previous process handed out.
@Suite("The backend killed mid-flow and started again")
struct BackendRestartTests {
    static let token = String(repeating: "5f", count: 32)
    static let number = "+16505550142"
    static let apiKey = "AIzaSyA-authsim-local-api-key-0000000"

    /// One backend process on `folder`/backend; kill it with ``ServerProcess/stop()``.
    static func backend(_ folder: URL, apnsPort: Int) async throws -> (ServerProcess, String) {
        let backend = try ServerProcess([try executable("authsim"), "backend", "--port", "0", "--receiver-port", String(apnsPort),
                                         "--certs", folder.appendingPathComponent("Certs").path,
                                         "--state", folder.appendingPathComponent("backend").path])
        do {
            _ = try await backend.waitFor("SMS outbox")
            return (backend, "http://127.0.0.1:\(try backend.port(after: "listening"))")
        } catch {
            backend.stop()
            throw error
        }
    }

    /// The emulator's SMS outbox: `[{phoneNumber, code, sessionInfo}]`.
    static func outbox(_ base: String) async throws -> [[String: Any]] {
        let data: Data = try await URLSession.shared.data(from: URL(string: "\(base)/emulator/v1/projects/authsim-demo/verificationCodes")!).0
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        return object?["verificationCodes"] as? [[String: Any]] ?? []
    }

    static func kill(_ process: ServerProcess) async throws {
        process.stop()
        _ = try await process.terminate()
    }

    @Test("app credential, pending session, SMS outbox, users, ID-token key and spent reCAPTCHA tokens survive SIGKILL")
    func killedBetweenSteps() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let registered = try await runProgram([try executable("push-receiver"), "devices", "add", "--state", folder.appendingPathComponent("receiver").path,
                                               "--environment", "sandbox", "--bundle", "com.example.authsim", "--token", Self.token])
        #expect(registered.status == 0, "\(registered.output)")
        let (receiver, apnsPort, _) = try await startReceiver(in: folder)
        defer { receiver.stop() }
        let v3 = "/www.googleapis.com/identitytoolkit/v3/relyingparty"
        let v1 = "/identitytoolkit.googleapis.com/v1/accounts"

        // 1. verifyClient: the receipt comes back; the secret goes out in the silent push (the receiver's log has it).
        var (backend, base) = try await Self.backend(folder, apnsPort: apnsPort)
        let (status1, verify) = try await post("\(base)\(v3)/verifyClient?key=\(Self.apiKey)", #"{"appToken":"\#(Self.token)","isSandbox":true}"#)
        #expect(status1 == 200)
        let receipt = try #require(verify["receipt"] as? String)
        let deliveries = try String(contentsOf: folder.appendingPathComponent("receiver/deliveries.jsonl"), encoding: .utf8)
        let line = try #require(deliveries.split(separator: "\n").last)
        let entry = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let secret = try #require(((entry["payload"] as? [String: Any])?["com.google.firebase.auth"] as? [String: Any])?["secret"] as? String)

        // 2. Killed; a new process takes the credential and sends the code.
        try await Self.kill(backend)
        (backend, base) = try await Self.backend(folder, apnsPort: apnsPort)
        let (status2, sent) = try await post("\(base)\(v1):sendVerificationCode?key=\(Self.apiKey)",
                                             #"{"phoneNumber":"\#(Self.number)","iosReceipt":"\#(receipt)","iosSecret":"\#(secret)"}"#)
        #expect(status2 == 200, "\(sent)")
        let sessionInfo = try #require(sent["sessionInfo"] as? String)
        // A wrong secret for the same receipt is still refused.
        let (forged, forgedBody) = try await post("\(base)\(v1):sendVerificationCode?key=\(Self.apiKey)",
                                                  #"{"phoneNumber":"\#(Self.number)","iosReceipt":"\#(receipt)","iosSecret":"\#(secret.hasPrefix("x") ? "y" : "x")\#(secret.dropFirst())"}"#)
        #expect(forged == 400)
        #expect(errorMessage(forgedBody)?.hasPrefix("INVALID_APP_CREDENTIAL") == true)

        // 3. Killed again; the SMS outbox and the pending session are still there; a wrong code counts.
        try await Self.kill(backend)
        (backend, base) = try await Self.backend(folder, apnsPort: apnsPort)
        let codes = try await Self.outbox(base)
        let code = try #require(codes.first { $0["sessionInfo"] as? String == sessionInfo }?["code"] as? String)
        let (wrong, wrongBody) = try await post("\(base)\(v1):signInWithPhoneNumber?key=\(Self.apiKey)",
                                                #"{"sessionInfo":"\#(sessionInfo)","code":"\#(code == "000000" ? "111111" : "000000")"}"#)
        #expect(wrong == 400)
        #expect(errorMessage(wrongBody) == "INVALID_CODE")
        let (status3, signedIn) = try await post("\(base)\(v1):signInWithPhoneNumber?key=\(Self.apiKey)",
                                                 #"{"sessionInfo":"\#(sessionInfo)","code":"\#(code)"}"#)
        #expect(status3 == 200, "\(signedIn)")
        let uid = try #require(signedIn["localId"] as? String)
        let idToken = try #require(signedIn["idToken"] as? String)
        #expect(signedIn["isNewUser"] as? Bool == true)

        // 4. Killed again: the session stays spent, the user stays, the ID token still verifies, a reCAPTCHA token is issued.
        try await Self.kill(backend)
        (backend, base) = try await Self.backend(folder, apnsPort: apnsPort)
        let (replayed, replayedBody) = try await post("\(base)\(v1):signInWithPhoneNumber?key=\(Self.apiKey)",
                                                      #"{"sessionInfo":"\#(sessionInfo)","code":"\#(code)"}"#)
        #expect(replayed == 400)
        #expect(errorMessage(replayedBody) == "INVALID_SESSION_INFO")
        let (updated, profile) = try await post("\(base)\(v1):update?key=\(Self.apiKey)", #"{"idToken":"\#(idToken)","displayName":"Ada"}"#)
        #expect(updated == 200, "\(profile)")
        #expect(profile["localId"] as? String == uid)
        let page = "\(base)/__/auth/handler?apiKey=\(Self.apiKey)&authType=verifyApp&ibi=com.example.authsim&eventId=ABCDEFGHIJ&appId=1:123:ios:abc"
        let html: Data = try await URLSession.shared.data(from: URL(string: page)!).0
        let recaptcha = try #require(String(decoding: html, as: UTF8.self).firstMatch(of: /03A[A-Za-z0-9_-]+/).map { String($0.output) })

        // 5. Killed again: the reCAPTCHA token works once, then is spent; the user signs in again as the same user.
        try await Self.kill(backend)
        (backend, base) = try await Self.backend(folder, apnsPort: apnsPort)
        defer { backend.stop() }
        let (status5, again) = try await post("\(base)\(v1):sendVerificationCode?key=\(Self.apiKey)",
                                              #"{"phoneNumber":"+16505550143","recaptchaToken":"\#(recaptcha)"}"#)
        #expect(status5 == 200, "\(again)")
        try await Self.kill(backend)
        (backend, base) = try await Self.backend(folder, apnsPort: apnsPort)
        let (spent, spentBody) = try await post("\(base)\(v1):sendVerificationCode?key=\(Self.apiKey)",
                                                #"{"phoneNumber":"+16505550144","recaptchaToken":"\#(recaptcha)"}"#)
        #expect(spent == 400)
        #expect(errorMessage(spentBody) == "CAPTCHA_CHECK_FAILED : Recaptcha verification failed - EXPIRED")
        let (resent, resentBody) = try await post("\(base)\(v1):sendVerificationCode?key=\(Self.apiKey)",
                                                  #"{"phoneNumber":"\#(Self.number)","iosReceipt":"\#(receipt)","iosSecret":"\#(secret)"}"#)
        #expect(resent == 200, "\(resentBody)")
        let codes2 = try await Self.outbox(base)
        #expect(codes2.count == 3)
        let code2 = try #require(codes2.first { $0["sessionInfo"] as? String == resentBody["sessionInfo"] as? String }?["code"] as? String)
        let (_, second) = try await post("\(base)\(v1):signInWithPhoneNumber?key=\(Self.apiKey)",
                                         #"{"sessionInfo":"\#(resentBody["sessionInfo"] as? String ?? "")","code":"\#(code2)"}"#)
        #expect(second["localId"] as? String == uid)
        #expect(second["isNewUser"] as? Bool == false)

        // The state folder is the user's alone.
        let attributes = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent("backend").path)
        #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o077 } == 0)
        let journal = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent("backend/journal.jsonl").path)
        #expect((journal[.posixPermissions] as? Int) == 0o600)
    }

    @Test("a torn last journal line (a write cut by a kill) is skipped; a damaged line elsewhere is an error that names it")
    func tornJournal() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let state = folder.appendingPathComponent("backend")
        let toolkit = try IdentityToolkit(pusher: nil, stateDirectory: state)
        let token = try await toolkit.issueRecaptchaToken(eventID: "ABCDEFGHIJ")
        let session = try await toolkit.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: "+16505550150", recaptchaToken: token))
            .sessionInfo
        let journal = state.appendingPathComponent("journal.jsonl")
        let handle = try FileHandle(forWritingTo: journal)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"session":{"id":"torn","phoneN"#.utf8))
        try handle.close()
        let restarted = try IdentityToolkit(pusher: nil, stateDirectory: state)
        #expect(await restarted.messages.map(\.sessionInfo) == [session])

        var text = try String(contentsOf: journal, encoding: .utf8)
        text = "not json\n" + text
        try text.write(to: journal, atomically: true, encoding: .utf8)
        #expect {
            _ = try IdentityToolkit(pusher: nil, stateDirectory: state)
        } throws: { error in
            "\(error)".contains("journal.jsonl line 1 is not a backend record")
        }
    }

    /// Issue 26: each backend on a new state directory made its own 2048-bit RSA key, synchronously on
    /// the cooperative pool. The suite starts about 195 of them: some 40 s of key generation on a
    /// 2-thread pool, during which nothing else in the process ran for up to 10 s at a time (a sender's
    /// server gave up on a silent connection; a scenario's 10 s wait for verifyClient ran out).
    @Test("a new state directory signs with the process's ID-token key, written there 0600; a directory's own key stays its own")
    func processKeyInNewDirectories() throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = try IdentityToolkit(pusher: nil, stateDirectory: folder.appendingPathComponent("a"))
        let second = try IdentityToolkit(pusher: nil, stateDirectory: folder.appendingPathComponent("b"))
        let memoryOnly = try IdentityToolkit(pusher: nil)
        // One key for the process, as Google signs every project's ID tokens with the same securetoken keys.
        #expect(first.tokenSigner.keyID == (try IDTokenSigner(projectID: "p")).keyID)
        #expect(second.tokenSigner.keyID == first.tokenSigner.keyID)
        #expect(memoryOnly.tokenSigner.keyID == first.tokenSigner.keyID)
        for name in ["a", "b"] {
            let file = folder.appendingPathComponent(name).appendingPathComponent("id-token-rsa-key.pem")
            let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            #expect(try String(contentsOf: file, encoding: .utf8) == IDTokenSigner.processKey.pemRepresentation)
        }
        // A directory that has a key (another process's, or one from before) keeps signing with it.
        let other = folder.appendingPathComponent("other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        let key = IDTokenSigner.makeKey()
        try key.pemRepresentation.write(to: other.appendingPathComponent("id-token-rsa-key.pem"), atomically: true, encoding: .utf8)
        let restarted = try IdentityToolkit(pusher: nil, stateDirectory: other)
        #expect(restarted.tokenSigner.keyID == (try IDTokenSigner(projectID: "p", key: key)).keyID)
        #expect(restarted.tokenSigner.keyID != first.tokenSigner.keyID)
    }
}

@Suite("The backend journal's lines")
struct BackendJournalLineTests {
    @Test("every kind of record is written as a journal line and reads back as itself")
    func roundTrip() throws {
        let now = Date(timeIntervalSince1970: 1_763_789_012.345)
        let message = SMSMessage(phoneNumber: "+16505550100", code: "123456", sessionInfo: "S", languageCode: nil, text: "t\"x\n", sentAt: now)
        let records: [BackendRecord] = [
            .receipt(id: "r", secretSHA256: "ab", appToken: "AA", issuedAt: now),
            .session(id: "s", phoneNumber: "+16505550100", code: "123456", createdAt: now),
            .wrongCode(session: "s"), .sessionUsed(session: "s"),
            .recaptcha(digest: "d", eventID: "ABCDEFGHIJ", issuedAt: now), .recaptchaUsed(digest: "d"),
            .sms(message), .sms(SMSMessage(phoneNumber: "+1", code: "1", sessionInfo: "x", languageCode: "fr", text: "é", sentAt: now)),
            .user(BackendUser(localId: "u", phoneNumber: "+1", createdAt: now, appleSub: "001.a", email: "e@x", displayName: "Ada")),
            .user(BackendUser(localId: "v", createdAt: now)),
            .userDeleted(localId: "u"), .appleTokenSpent(digest: "d", at: now),
            .applePending(token: "p", sub: "001.a", email: nil, at: now), .applePending(token: "q", sub: "001.b", email: "m@x", at: now),
            .applePendingUsed(token: "p"),
        ]
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        for record in records {
            let line = try BackendJournal.encode(record)
            let decoded = try decoder.decode(BackendRecord.self, from: Data(line.utf8))
            #expect(try encoder.encode(decoded) == encoder.encode(record), "\(line)")
        }
    }
}
