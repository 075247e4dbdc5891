@testable import AuthBackend
import Crypto
import IdentityToolkitAPI
import Foundation
import PostgresStores
import TestSupport
import Testing
import Utilities

/// Backends as nodes of one fleet, in this process: each its own IdentityToolkit on its own
/// connection to one real PostgreSQL database (TemporaryPostgres). What a node answered is what
/// the fleet has; single-use things are used once whichever node is asked.
@Suite("Backends sharing one PostgreSQL")
struct BackendStoreTests {
    static let number = "+16505550199"

    /// A node: a backend on `url`, taking code requests without app verification, every SMS `123456`.
    static func node(_ url: String, _ name: String, clock: any WallClock = SystemWallClock(),
                     configure: (inout BackendConfiguration) -> Void = { _ in }) async throws -> IdentityToolkit {
        var configuration = BackendConfiguration()
        configuration.acceptUnverifiedCodeRequests = true
        configuration.fixedSMSCode = "123456"
        configure(&configuration)
        let store = PostgresBackendStore(location: try PostgresLocation(url), node: name, clock: clock)
        return try await IdentityToolkit.open(configuration: configuration, pusher: nil, clock: clock, store: store)
    }

    static func expectError(_ code: IdentityToolkitError.Code, _ body: () async throws(IdentityToolkitError) -> Void,
                            sourceLocation: SourceLocation = #_sourceLocation) async {
        do throws(IdentityToolkitError) {
            try await body()
            Issue.record("expected \(code), got an answer", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == code, "\(error.message)", sourceLocation: sourceLocation)
        }
    }

    @Test("a code requested from one node is checked on another; the ID token one signs the other accepts")
    func splitSignIn() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let url = database.url
        let a = try await Self.node(url, "a")
        let b = try await Self.node(url, "b")

        let sent = try await a.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: Self.number))
        let session = try #require(sent.sessionInfo)
        // B's outbox (the emulator's verificationCodes) has A's SMS.
        let outbox = try await b.verificationCodes().verificationCodes
        #expect(outbox.map(\.sessionInfo) == [session])
        // A wrong code on B counts on A: the attempts are the fleet's.
        await Self.expectError(.invalidCode) { () throws(IdentityToolkitError) in
            _ = try await b.call(ToolkitCalls.signInWithPhoneNumber, VerifyPhoneNumberRequest(sessionInfo: sent.sessionInfo, code: "000000"))
        }
        #expect(try await a.code(forSession: session) == "123456")
        #expect(try await a.reading { $0.sessions[session]?.attempts } == 1)

        let signedIn = try await b.call(ToolkitCalls.signInWithPhoneNumber, VerifyPhoneNumberRequest(sessionInfo: sent.sessionInfo, code: "123456"))
        let idToken = try #require(signedIn.idToken)
        // A reads the user B created with B's token: both sign with the fleet's key.
        let account = try await a.call(ToolkitCalls.getAccountInfo, GetAccountInfoRequest(idToken: idToken))
        #expect(account.users?.first?.localId == signedIn.localId)
        #expect(account.users?.first?.phoneNumber == Self.number)
        // The code is spent for the fleet.
        await Self.expectError(.invalidSessionInfo) { () throws(IdentityToolkitError) in
            _ = try await a.call(ToolkitCalls.signInWithPhoneNumber, VerifyPhoneNumberRequest(sessionInfo: sent.sessionInfo, code: "123456"))
        }
        // A refresh token B issued, refreshed on A.
        let refreshed = try await a.secureToken(SecureTokenRequest(grantType: "refresh_token", refreshToken: signedIn.refreshToken))
        #expect(refreshed.userId == signedIn.localId)
        // Which node wrote what: A the session, B the user.
        let nodes = try await postgres.psql(database.name, "SELECT string_agg(DISTINCT node, ',' ORDER BY node) FROM backend_rows")
        #expect(nodes == "a,b")
    }

    @Test("rows past their lifetime and retention go from the store after a commit, once a minute; users stay")
    func expiredRowsGo() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let clock = ManualWallClock(Date())
        let a = try await Self.node(database.url, "a", clock: clock)
        func rows(_ table: String) async throws -> String {
            try await postgres.psql(database.name, "SELECT count(*) FROM backend_rows WHERE key LIKE '\(table)/%'")
        }
        let sent = try await a.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: Self.number))
        _ = try await a.call(ToolkitCalls.signInWithPhoneNumber, VerifyPhoneNumberRequest(sessionInfo: sent.sessionInfo, code: "123456"))
        let unused = try await a.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: "+16505550177"))
        let before = (try await rows("session"), try await rows("sms"), try await rows("user"))
        #expect(before == ("1", "2", "1"))
        // Past the code's lifetime and the retention after it: the next commit drops them.
        let configuration = BackendConfiguration()
        clock.advance(by: configuration.codeLifetime + configuration.expiredRetention + 61)
        _ = try await a.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: "+16505550166"))
        let after = (try await rows("session"), try await rows("sms"), try await rows("user"))
        #expect(after == ("1", "1", "1"))
        await Self.expectError(.invalidSessionInfo) { () throws(IdentityToolkitError) in
            _ = try await a.call(ToolkitCalls.signInWithPhoneNumber, VerifyPhoneNumberRequest(sessionInfo: unused.sessionInfo, code: "123456"))
        }
    }

    @Test("a fleet an older authsim kept as records: the first node started makes them rows; the user, the code and the SMS carry over, the records go")
    func legacyRecordsBecomeRows() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let url = database.url
        // The schema, with no rows yet; then the records an older fleet left (a snapshot's and one after).
        _ = try await Self.node(url, "setup")
        let now = Date()
        let user = BackendUser(localId: "legacyUser", phoneNumber: "+16505550188", createdAt: now.addingTimeInterval(-3600))
        let records: [BackendRecord] = [
            .user(user),
            .session(id: "legacySession", phoneNumber: Self.number, code: "654321", createdAt: now),
            .sms(SMSMessage(phoneNumber: Self.number, code: "654321", sessionInfo: "legacySession", languageCode: nil, text: "654321", sentAt: now)),
        ]
        let texts = try records.map { record throws(IdentityToolkitError) in try BackendJournal.text(record) }
        let snapshot = "[" + texts[0] + "]"
        _ = try await postgres.psql(database.name, """
            INSERT INTO backend_snapshots (position, node, records) VALUES (1, 'old', '\(snapshot)'::jsonb);
            INSERT INTO backend_records (position, node, record) VALUES (2, 'old', '\(texts[1])'::jsonb), (3, 'old', '\(texts[2])'::jsonb)
            """)
        let a = try await Self.node(url, "a")
        #expect(try await postgres.psql(database.name, "SELECT count(*) FROM backend_records") == "0")
        #expect(try await postgres.psql(database.name, "SELECT count(*) FROM backend_snapshots") == "0")
        #expect(try await a.verificationCodes().verificationCodes.map(\.sessionInfo) == ["legacySession"])
        // A second node started after finds rows and adopts nothing again.
        let b = try await Self.node(url, "b")
        let signedIn = try await b.call(ToolkitCalls.signInWithPhoneNumber, VerifyPhoneNumberRequest(sessionInfo: "legacySession", code: "654321"))
        #expect(signedIn.phoneNumber == Self.number && signedIn.isNewUser == true)
        await Self.expectError(.invalidSessionInfo) { () throws(IdentityToolkitError) in
            _ = try await a.call(ToolkitCalls.signInWithPhoneNumber, VerifyPhoneNumberRequest(sessionInfo: "legacySession", code: "654321"))
        }
        #expect(try await a.reading { $0.projectUsers.byID["legacyUser"]?.phoneNumber } == "+16505550188")
        #expect(try await postgres.psql(database.name, "SELECT node FROM backend_rows WHERE key = 'user//legacyUser'") == "a")
    }

    @Test("the fleet's events are kept an hour: a node deletes older ones, at most once a minute")
    func eventsExpire() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let clock = ManualWallClock(Date())
        let events = PostgresEventLog(location: try PostgresLocation(database.url), node: "a", clock: clock)
        try await events.open()
        func count() async throws -> String { try await postgres.psql(database.name, "SELECT count(*) FROM backend_events") }
        // An event two hours old goes with the first batch's pruning; a new one stays.
        events.record(.accountDeleted(uid: "old"), signIn: nil, position: 1, at: clock.now.addingTimeInterval(-7200))
        events.record(.accountDeleted(uid: "new"), signIn: nil, position: 2, at: clock.now)
        #expect(await events.flush())
        #expect(try await count() == "1")
        // Within the minute nothing more is deleted; after it, the old one goes.
        events.record(.accountDeleted(uid: "old-again"), signIn: nil, position: 3, at: clock.now.addingTimeInterval(-7200))
        #expect(await events.flush())
        #expect(try await count() == "2")
        clock.advance(by: 61)
        events.record(.accountDeleted(uid: "later"), signIn: nil, position: 4, at: clock.now)
        #expect(await events.flush())
        #expect(try await count() == "2")
        #expect(try await postgres.psql(database.name, "SELECT string_agg(event->'event'->'accountDeleted'->>'uid', ',' ORDER BY id) FROM backend_events") == "new,later")
        await events.close()
    }

    @Test("events kept while their pruning fails: kept once, never queued again")
    func failedPruningKeepsEventsOnce() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let clock = ManualWallClock(Date())
        let events = PostgresEventLog(location: try PostgresLocation(database.url), node: "a", clock: clock)
        try await events.open()
        // Every DELETE on the table fails; INSERTs go through.
        _ = try await postgres.psql(database.name, """
            CREATE FUNCTION refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no deleting here'; END $$;
            CREATE TRIGGER refuse_delete BEFORE DELETE ON backend_events FOR EACH STATEMENT EXECUTE FUNCTION refuse_delete();
            """)
        events.record(.accountDeleted(uid: "first"), signIn: nil, position: 1, at: clock.now)
        #expect(await events.flush())
        clock.advance(by: 61)
        events.record(.accountDeleted(uid: "second"), signIn: nil, position: 2, at: clock.now)
        #expect(await events.flush())
        #expect(try await postgres.psql(database.name, "SELECT string_agg(event->'event'->'accountDeleted'->>'uid', ',' ORDER BY id) FROM backend_events") == "first,second")
        await events.close()
    }

    @Test("two nodes racing for one code and for one reCAPTCHA token: one wins each")
    func racesForSingleUse() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let url = database.url
        let a = try await Self.node(url, "a")
        let b = try await Self.node(url, "b")
        for round in 0..<12 {
            let number = "+1650555\(String(format: "%04d", 1000 + round))"
            let sent = try await (round.isMultiple(of: 2) ? a : b).sendVerificationCode(SendVerificationCodeRequest(phoneNumber: number))
            let request = VerifyPhoneNumberRequest(sessionInfo: sent.sessionInfo, code: "123456")
            let wins = await withTaskGroup(of: Bool.self) { group in
                for node in [a, b, a, b] {
                    group.addTask {
                        do throws(IdentityToolkitError) { _ = try await node.call(ToolkitCalls.signInWithPhoneNumber, request); return true } catch {
                            return false
                        }
                    }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(wins == 1, "round \(round): \(wins) sign-ins with one code")

            let token = try await (round.isMultiple(of: 2) ? b : a).issueRecaptchaToken(eventID: "EVENT\(round)")
            let codeRequests = await withTaskGroup(of: Bool.self) { group in
                for node in [a, b, b, a] {
                    group.addTask {
                        do throws(IdentityToolkitError) {
                            _ = try await node.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: "+1650556\(String(format: "%04d", 1000 + round))",
                                                                                               recaptchaToken: token))
                            return true
                        } catch { return false }
                    }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(codeRequests == 1, "round \(round): \(codeRequests) code requests with one reCAPTCHA token")
        }
    }

    /// The batches are run by the calls waiting for them (FleetLedger): a call that finds none
    /// running runs one and hands the next to a call that queued meanwhile. No call may be left
    /// waiting, answered twice, or answered with records the store does not have. The limit
    /// catches a call left waiting, not a slow machine (on two busy cores this took 156 s).
    @Test("many changes at once on two nodes: each answered once, every one kept", .timeLimit(.minutes(10)))
    func manyChangesAtOnce() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let a = try await Self.node(database.url, "a")
        let b = try await Self.node(database.url, "b")
        let sessions = try await withThrowingTaskGroup(of: String?.self) { group in
            for index in 0..<200 {
                group.addTask {
                    let number = "+1650557\(String(format: "%04d", index))"
                    return try await (index.isMultiple(of: 2) ? a : b).sendVerificationCode(SendVerificationCodeRequest(phoneNumber: number)).sessionInfo
                }
            }
            return try await group.reduce(into: [String]()) { if let session = $1 { $0.append(session) } }
        }
        #expect(sessions.count == 200)
        #expect(Set(sessions).count == 200)
        // A node started after has every one: nothing was answered before it was kept.
        let c = try await Self.node(database.url, "c")
        #expect(Set(try await c.verificationCodes().verificationCodes.map(\.sessionInfo)) == Set(sessions))
        for node in [a, b, c] { await node.shutdown() }
    }

    /// A batch runs in the task of the call that leads it, with every other call's change: a
    /// cancelled leader (a test's task group, a program stopping) must not fail the others'.
    /// Nothing in a batch reacts to cancellation (PostgresSession runs each query and connect in a
    /// task of its own), so every cancelled call is answered too.
    @Test("cancelled calls: every change of their batches still answered and kept", .timeLimit(.minutes(10)))
    func cancelledLeaders() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let a = try await Self.node(database.url, "a")
        let calls = (0..<50).map { index in
            Task { () throws(IdentityToolkitError) -> String? in
                try await a.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: "+1650558\(String(format: "%04d", index))")).sessionInfo
            }
        }
        for call in calls.enumerated() where call.offset.isMultiple(of: 2) { call.element.cancel() }
        var sessions: [String] = []
        for call in calls { if let session = try await call.value { sessions.append(session) } }
        #expect(Set(sessions).count == 50)
        let b = try await Self.node(database.url, "b")
        #expect(Set(try await b.verificationCodes().verificationCodes.map(\.sessionInfo)) == Set(sessions))
        for node in [a, b] { await node.shutdown() }
    }

    @Test("the project config one node changes (SMS defense, test numbers) is the fleet's, also for a node started after")
    func projectConfigIsTheFleets() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let a = try await Self.node(database.url, "a")
        let b = try await Self.node(database.url, "b")
        #expect(try await b.call(ToolkitCalls.recaptchaConfig, GetRecaptchaConfigRequest(clientType: "CLIENT_TYPE_IOS", version: .recaptchaEnterprise))
            .recaptchaEnforcementState?.first { $0.provider == .phone }?.enforcementState == "OFF")
        _ = try await a.updateProjectConfig(EmulatorProjectConfig(
            signIn: .init(phoneNumber: .init(testPhoneNumbers: ["+16505554567": "654321"])),
            recaptchaConfig: ProjectRecaptchaConfig(phoneEnforcementState: "ENFORCE")))
        // B answers with A's config: ENFORCE in recaptchaConfig, and a code request without reCAPTCHA Enterprise (which B took before) is refused.
        let config = try await b.call(ToolkitCalls.recaptchaConfig, GetRecaptchaConfigRequest(clientType: "CLIENT_TYPE_IOS", version: .recaptchaEnterprise))
        #expect(config.recaptchaEnforcementState?.first { $0.provider == .phone }?.enforcementState == "ENFORCE")
        await Self.expectError(.missingClientType) { () throws(IdentityToolkitError) in
            _ = try await b.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: Self.number))
        }
        // A test number A added works on B, and on C, started afterwards.
        let c = try await Self.node(database.url, "c")
        #expect(try await c.projectConfigForAdmin().signIn?.phoneNumber?.testPhoneNumbers == ["+16505554567": "654321"])
        let sent = try await c.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: "+16505554567"))
        let signedIn = try await b.call(ToolkitCalls.signInWithPhoneNumber, VerifyPhoneNumberRequest(sessionInfo: sent.sessionInfo, code: "654321"))
        #expect(signedIn.phoneNumber == "+16505554567")
    }

    @Test("a database migrated by a newer authsim, of a newer record format, or holding another project, is refused with what to do")
    func refusesForeignDatabases() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let newer = try await postgres.newDatabase("\(#function)newer")
        _ = try await Self.node(newer.url, "a")
        // Every step says which authsim applied it; the records' formats are this build's.
        #expect(try await postgres.psql(newer.name, "SELECT DISTINCT applied_by FROM authsim_migrations")
            .trimmingCharacters(in: .whitespacesAndNewlines) == AuthsimVersion.current)
        #expect(try await postgres.psql(newer.name, "SELECT format || ' ' || version || ' ' || written_by FROM authsim_formats ORDER BY format")
            .split(separator: "\n") == ["backend records 2 \(AuthsimVersion.current)", "receiver log lines 1 \(AuthsimVersion.current)"])
        _ = try await postgres.psql(newer.name, "INSERT INTO authsim_migrations (version, name, applied_by) VALUES (99, 'from the future', '9.0.0')")
        do {
            _ = try await Self.node(newer.url, "b")
            Issue.record("a database at schema 99 was opened")
        } catch let error as SharedStoreError {
            #expect(error.code == .schemaTooNew)
            #expect(error.message.contains("schema version 99"), "\(error.message)")
            #expect(error.message.contains("authsim 9.0.0, a newer authsim") && error.message.contains("(\(AuthsimVersion.current))"), "\(error.message)")
        }

        // Records of a newer format: refused at start, naming both authsims and the versions.
        let newerRecords = try await postgres.newDatabase("\(#function)records")
        let running = try await Self.node(newerRecords.url, "a")
        _ = try await running.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: Self.number))
        _ = try await postgres.psql(newerRecords.name, "UPDATE authsim_formats SET version = 3, written_by = '9.0.0' WHERE format = 'backend records'")
        do {
            _ = try await Self.node(newerRecords.url, "b")
            Issue.record("a database whose records are of a newer format was opened")
        } catch let error as SharedStoreError {
            #expect(error.code == .schemaTooNew)
            #expect(error.message.contains("authsim 9.0.0 in backend records format 3") && error.message.contains("(\(AuthsimVersion.current)) reads formats 1–2"),
                    "\(error.message)")
        }
        // A node already running meets a row it cannot read (what a newer node would write): it
        // answers STATE_FORMAT, saying to upgrade it, and writes nothing.
        _ = try await postgres.psql(newerRecords.name, """
            INSERT INTO backend_rows (key, version, value, node) VALUES ('config/project', nextval('backend_row_versions'), '{"fromTheFuture":[1]}', 'b')
            """)
        await Self.expectError(.stateFormat) { () throws(IdentityToolkitError) in
            _ = try await running.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: "+16505550197"))
        }

        let other = try await postgres.newDatabase("\(#function)other")
        _ = try await Self.node(other.url, "a")
        do {
            _ = try await Self.node(other.url, "b") { $0.projectID = "another-project" }
            Issue.record("another project's database was opened")
        } catch let error as SharedStoreError {
            #expect(error.code == .otherProject)
            #expect(error.message.contains("authsim-demo"), "\(error.message)")
        }
    }

    @Test("the database lost mid-run: 503 UNAVAILABLE, nothing answered that was not kept, back after the backoff")
    func databaseLost() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let url = database.url
        let name = database.name
        let clock = ManualWallClock(Date())
        let a = try await Self.node(url, "a", clock: clock)
        let before = try await a.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: Self.number))

        // The database refuses new connections and drops A's.
        _ = try await postgres.psql("postgres", "ALTER DATABASE \"\(name)\" ALLOW_CONNECTIONS false")
        _ = try await postgres.psql("postgres", "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '\(name)'")
        for _ in 0..<3 {
            await Self.expectError(.unavailable) { () throws(IdentityToolkitError) in
                _ = try await a.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: "+16505550198"))
            }
        }
        // A read fails too, rather than answer what this node last knew.
        await Self.expectError(.unavailable) { () throws(IdentityToolkitError) in _ = try await a.verificationCodes() }

        // Back: after the backoff (moved, not waited for), A reconnects and the fleet has exactly what was answered.
        _ = try await postgres.psql("postgres", "ALTER DATABASE \"\(name)\" ALLOW_CONNECTIONS true")
        clock.advance(by: 10)
        let after = try await a.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: "+16505550198"))
        let b = try await Self.node(url, "b")
        #expect(Set(try await b.verificationCodes().verificationCodes.map(\.sessionInfo)) == [before.sessionInfo, after.sessionInfo])
    }

    @Test("Sign in with Apple across nodes: a token one node's Apple sheet signed is taken by another, every node gives the Apple user one account and remembers the consent, and its code is revoked once on any node")
    func appleAcrossNodes() async throws {
        guard let postgres = try await TemporaryPostgres.sharedIfInstalled() else { return }
        let database = try await postgres.newDatabase(#function)
        let a = try await Self.node(database.url, "a")
        let b = try await Self.node(database.url, "b")
        #expect(a.appleID.keyID == b.appleID.keyID, "one Apple key for the fleet")
        let clientID = BackendConfiguration().bundleID
        let raw = "a-raw-nonce-for-the-fleet"
        let hashed = SHA256.hash(data: Data(raw.utf8)).map { String(format: "%02x", $0) }.joined()
        func sheet(_ node: IdentityToolkit) async throws -> AppleAuthorizeResponse {
            try await node.appleAuthorize(AppleAuthorizeRequest(clientID: clientID, user: "ada", nonce: hashed, givenName: "Ada", familyName: "L"))
        }
        func signIn(_ authorization: AppleAuthorizeResponse, at node: IdentityToolkit) async throws -> VerifyAssertionResponse {
            try await node.signInWithIdp(VerifyAssertionRequest(postBody: "providerId=apple.com&id_token=\(authorization.identityToken)&nonce=\(raw)"))
        }
        // The first consent, on A, brings the name and email; the fleet remembers it, so B's sheet brings neither, as Apple's.
        let consent = try await sheet(a)
        #expect(consent.email == "ada@icloud.example" && consent.givenName == "Ada")
        let first = try await signIn(consent, at: b)
        #expect(first.isNewUser == true)
        let uid = try #require(first.localId)
        // B's sheet, A's sign-in: the same sub, so the same user.
        let later = try await sheet(b)
        #expect(later.email == nil && later.givenName == nil, "a consent the fleet has seen")
        let again = try await signIn(later, at: a)
        #expect(again.localId == uid && again.isNewUser == false)
        #expect(again.federatedId == first.federatedId)

        // An authorization code A's sheet issued is revoked on B, once for the fleet.
        let code = try await sheet(a).authorizationCode
        let idToken = try #require(again.idToken)
        let revoke = RevokeTokenRequest(providerId: .apple, tokenType: .code, token: code, idToken: idToken)
        _ = try await b.call(ToolkitCalls.revokeToken, revoke)
        await Self.expectError(.invalidIDPResponse) { () throws(IdentityToolkitError) in _ = try await a.call(ToolkitCalls.revokeToken, revoke) }
        // The grant ended on B: A's sheet asks again, with the name and email.
        #expect(try await sheet(a).email == "ada@icloud.example")
        // A code changed by one character is no code.
        var forged = Array(code)
        forged[3] = forged[3] == "0" ? "1" : "0"
        let other = RevokeTokenRequest(providerId: .apple, tokenType: .code, token: String(forged), idToken: idToken)
        await Self.expectError(.invalidIDPResponse) { () throws(IdentityToolkitError) in _ = try await b.call(ToolkitCalls.revokeToken, other) }
    }
}
