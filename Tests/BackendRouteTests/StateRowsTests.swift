@testable import AuthBackend
import Foundation
import IdentityToolkitAPI
import Testing

/// The backend's state as rows (``StateTable``, ``StateRow``): what a fleet node loads from the
/// store and writes back. The rules run on a state that holds only what was loaded; each read of a
/// row or table it lacks is noted (``StateReads``), loaded, and the rules run again. These tests
/// hold that to a state that holds everything (a journal's): the same answers, the same records,
/// and the rows written are every row the call changed.
@Suite("The backend's state as rows: the rules on what a fleet node loads")
struct StateRowsTests {
    let start = CoreFixtures.start
    let number = "+16505551234"

    /// Runs each call twice: on a core that holds everything, and as a fleet node would, on a state
    /// that starts empty and loads from the first core's rows what the rules missed, until they
    /// miss nothing.
    struct TwoStates {
        var whole: BackendCore
        var seed: UInt64 = 1
        /// The most runs one call took.
        var mostRuns = 0

        /// `core`, its state one that notes reads (noted, never loaded: it holds everything), so
        /// that its tables are a fleet node's (the outbox and the silent pushes as rows).
        init(_ core: BackendCore) {
            whole = core
            whole.state = BackendState(reads: StateReads())
        }

        mutating func call<T>(at now: Date, _ body: (inout CoreCall) throws(IdentityToolkitError) -> T) throws -> T {
            let random = SeededRandom(seed: seed)
            seed += 1
            let before = try rowTexts(whole.state)
            let reads = StateReads()
            var loaded = whole
            loaded.state = BackendState(reads: reads)
            var run = loaded
            var partial = run.handle(now: now, random: random, body)
            var runs = 1
            while reads.hasMisses && runs < 10 {
                let (rows, prefixes, loose) = (reads.missing, reads.missingWhole, reads.missingLoose)
                for row in rows { try loaded.state.loadRow(whole.state.row(row)) }
                for prefix in prefixes.union(loose) { for row in try whole.state.rows(under: prefix) { try loaded.state.loadRow(row) } }
                reads.hold(rows: rows, whole: prefixes)
                reads.loadedLoosely(loose)
                reads.clearMisses()
                run = loaded
                partial = run.handle(now: now, random: random, body)
                runs += 1
            }
            mostRuns = max(mostRuns, runs)
            #expect(!reads.hasMisses, "still missing \(reads.missing) \(reads.missingWhole) after \(runs) runs")
            let written = try run.state.changedRows()

            let full = whole.handle(now: now, random: random, body)
            #expect(try lines(partial.records) == lines(full.records))
            #expect(partial.events.map(\.kind) == full.events.map(\.kind))
            #expect(partial.answer.errorCode == full.answer.errorCode)
            let after = try rowTexts(whole.state)
            let changed = Set(before.keys).union(after.keys).filter { before[$0] != after[$0] }
            let writes = Dictionary(written.map { ($0.key, $0.text) }, uniquingKeysWith: { first, _ in first })
            #expect(changed.subtracting(writes.keys).isEmpty, "rows changed and not written: \(changed.subtracting(writes.keys).sorted())")
            for (key, text) in writes { #expect(text == after[key], "row \(key)") }
            return try full.answer.get()
        }

        func rowTexts(_ state: BackendState) throws -> [String: String] {
            var texts: [String: String] = [:]
            for row in try state.allRows() { texts[row.key] = row.text }
            return texts
        }

        func lines(_ records: [BackendRecord]) throws -> [String] {
            try records.map { record throws(IdentityToolkitError) in try BackendJournal.text(record) }
        }
    }

    @Test("phone sign-ins by silent push and reCAPTCHA, a wrong code, a returning user: the same answers, records and rows")
    func phoneSignIns() throws {
        var states = TwoStates(try CoreFixtures.core())
        for (round, offset) in [(0, 0.0), (1, 100.0)] {
            let (_, receipt, secret, _) = try states.call(at: start.addingTimeInterval(offset)) { call throws(IdentityToolkitError) in
                try call.issueAppCredential(VerifyClientRequest(appToken: String(repeating: "ab", count: 32), isSandbox: true))
            }
            let session = try states.call(at: start.addingTimeInterval(offset + 1)) { call throws(IdentityToolkitError) in
                try call.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: number, iosReceipt: receipt, iosSecret: secret), languageCode: nil)
            }
            let code = try #require(states.whole.state.sessions[session.sessionInfo ?? ""]?.code)
            if round == 1 {
                let wrong = code == "000000" ? "111111" : "000000"
                #expect(throws: IdentityToolkitError.self) {
                    try states.call(at: start.addingTimeInterval(offset + 2)) { call throws(IdentityToolkitError) in
                        try call.signInWithPhoneNumber(VerifyPhoneNumberRequest(sessionInfo: session.sessionInfo, code: wrong))
                    }
                }
            }
            let decision = try states.call(at: start.addingTimeInterval(offset + 3)) { call throws(IdentityToolkitError) in
                try call.signInWithPhoneNumber(VerifyPhoneNumberRequest(sessionInfo: session.sessionInfo, code: code))
            }
            guard case .tokens(let grant, _) = decision else {
                Issue.record("no tokens")
                return
            }
            #expect(grant.user.phoneNumber == number)
        }
        #expect(states.whole.state.userCount == 1)
        // The fallback: a reCAPTCHA token continues the sign-in whose push went out.
        _ = try states.call(at: start.addingTimeInterval(200)) { call throws(IdentityToolkitError) in
            try call.issueAppCredential(VerifyClientRequest(appToken: String(repeating: "cd", count: 32), isSandbox: false))
        }
        let token = try states.call(at: start.addingTimeInterval(205)) { call throws(IdentityToolkitError) in
            call.issueRecaptchaToken(eventID: "abcdefghij")
        }
        let other = "+16505559876"
        let session = try states.call(at: start.addingTimeInterval(206)) { call throws(IdentityToolkitError) in
            try call.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: other, recaptchaToken: token), languageCode: nil)
        }
        // The token is spent: a second use is refused on both.
        #expect(throws: IdentityToolkitError.self) {
            try states.call(at: start.addingTimeInterval(207)) { call throws(IdentityToolkitError) in
                try call.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: other, recaptchaToken: token), languageCode: nil)
            }
        }
        #expect(session.sessionInfo?.isEmpty == false)
        // A sign-in's steps load what they read: a few runs, not one per row.
        #expect(states.mostRuns <= 4, "\(states.mostRuns) runs")
    }

    @Test("users by email, changed and deleted; tenants made, listed, their users and deletion: the same answers, records and rows")
    func usersAndTenants() throws {
        var states = TwoStates(try CoreFixtures.core())
        let created = try states.call(at: start) { call throws(IdentityToolkitError) in
            try call.adminCreateUser(SignUpNewUserRequest(email: "Ada@Example.com", displayName: "Ada", phoneNumber: number), hash: CoreFixtures.hash)
        }
        let uid = try #require(created.localId)
        _ = try states.call(at: start.addingTimeInterval(1)) { call throws(IdentityToolkitError) in
            try call.signInWithPassword(email: "ada@example.com", verifiedHash: CoreFixtures.hash.hash, tenant: nil)
        }
        _ = try states.call(at: start.addingTimeInterval(2)) { call throws(IdentityToolkitError) in
            try call.adminUpdate(SetAccountInfoRequest(localId: uid, displayName: "Countess", email: "countess@example.com"), hash: nil)
        }
        // The old email's index row goes; the new one's comes.
        #expect(states.whole.state.projectUsers.user(email: "ada@example.com") == nil)
        #expect(throws: IdentityToolkitError.self) {
            try states.call(at: start.addingTimeInterval(3)) { call throws(IdentityToolkitError) in
                try call.adminCreateUser(SignUpNewUserRequest(email: "countess@example.com"), hash: nil)
            }
        }
        var ids: [String] = []
        for name in ["one", "two"] {
            let made = try states.call(at: start.addingTimeInterval(4)) { call throws(IdentityToolkitError) in
                try call.createTenant(CreateTenantRequest(TenantConfig(displayName: name, allowPasswordSignup: true)))
            }
            ids.append(try #require(made.tenantId))
        }
        _ = try states.call(at: start.addingTimeInterval(5)) { call throws(IdentityToolkitError) in
            try call.adminCreateUser(SignUpNewUserRequest(localId: uid, email: "a@example.com", tenantId: ids[0]), hash: CoreFixtures.hash)
        }
        let listed = try states.call(at: start.addingTimeInterval(6)) { call throws(IdentityToolkitError) in
            try call.listTenants(ListTenantsRequest())
        }
        #expect(listed.tenants?.count == 2)
        #expect(states.whole.state.users(in: ids[0]).count == 1)
        _ = try states.call(at: start.addingTimeInterval(7)) { call throws(IdentityToolkitError) in
            try call.deleteTenant(DeleteTenantRequest(tenantId: ids[0]))
        }
        #expect(states.whole.state.users(in: ids[0]).count == 0)
        _ = try states.call(at: start.addingTimeInterval(8)) { call throws(IdentityToolkitError) in
            try call.adminDelete(DeleteAccountRequest(idToken: nil, localId: uid))
        }
        #expect(states.whole.state.userCount == 0)
    }

    @Test("every table's rows read back as they were written")
    func roundTrip() throws {
        var states = TwoStates(try CoreFixtures.core())
        let (_, receipt, secret, _) = try states.call(at: start) { call throws(IdentityToolkitError) in
            try call.issueAppCredential(VerifyClientRequest(appToken: String(repeating: "ab", count: 32), isSandbox: true))
        }
        _ = try states.call(at: start.addingTimeInterval(1)) { call throws(IdentityToolkitError) in
            try call.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: number, iosReceipt: receipt, iosSecret: secret), languageCode: nil)
        }
        _ = try states.call(at: start.addingTimeInterval(2)) { call throws(IdentityToolkitError) in
            try call.adminCreateUser(SignUpNewUserRequest(email: "ada@example.com", tenantId: "t9"), hash: CoreFixtures.hash)
        }
        let rows = try states.whole.state.allRows()
        #expect(Set(rows.compactMap { $0.key.split(separator: "/").first.map(String.init) })
                    .isSuperset(of: ["receipt", "session", "latest", "tenant", "user", "email"]))
        var copy = BackendState()
        for row in rows { try copy.loadRow(row) }
        #expect(try copy.allRows().sorted { $0.key < $1.key } == rows.sorted { $0.key < $1.key })
        // A key of no table, or a scoped table's key without its tenant, is a clear error.
        #expect(throws: IdentityToolkitError.self) { try copy.loadRow(StateRow(key: "nothing/x", text: "{}")) }
        #expect(throws: IdentityToolkitError.self) { try copy.loadRow(StateRow(key: "user", text: nil)) }
        #expect(throws: IdentityToolkitError.self) { try copy.loadRow(StateRow(key: "session/x", text: "not JSON")) }
    }

    @Test("a state notes the rows and tables it lacks, and nothing once they are held")
    func notesWhatItLacks() {
        let reads = StateReads()
        var state = BackendState(reads: reads)
        _ = state.sessions["s1"]
        _ = state.users(in: "t1").byID["u1"]
        _ = state.receipts.count
        #expect(reads.missing == ["session/s1", "user/t1/u1"] && reads.missingWhole == ["receipt/"])
        reads.hold(rows: reads.missing, whole: reads.missingWhole)
        reads.clearMisses()
        _ = state.sessions["s1"]
        _ = state.receipts["any"]
        state.sessions["s2"] = nil
        #expect(!reads.hasMisses)
        // A write of a row never read is a change, not a miss; a change of one read is both.
        _ = state.sessions.removeValue(forKey: "s3")
        #expect(reads.missing == ["session/s3"])
        #expect(state.sessions.changed == ["s2", "s3"])
        // Outside a fleet nothing is noted.
        var alone = BackendState()
        alone.sessions["s"] = nil
        #expect(alone.reads == nil && alone.sessions.changed.isEmpty)
    }
}
