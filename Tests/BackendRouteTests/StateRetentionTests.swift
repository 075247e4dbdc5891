@testable import AuthBackend
import Foundation
import IdentityToolkitAPI
import Testing
import Utilities

/// What a sign-in leaves behind, and for how long: a spent session dropped at once; unspent
/// sessions, codes and the outbox kept for their lifetime and `expiredRetention` (their own errors
/// until then), refresh tokens sealed instead of kept, the journal rewritten once it is twice the
/// state. (Google's token endpoint's errors:
/// https://firebase.google.com/docs/reference/rest/auth#section-refresh-token.)
@Suite("State that does not grow with sign-ins")
struct StateRetentionTests {
    static let number = "+16505550142"

    func toolkit(_ clock: ManualWallClock, folder: URL? = nil, configure: (inout BackendConfiguration) -> Void = { _ in }) throws -> IdentityToolkit {
        var configuration = BackendConfiguration()
        configuration.acceptUnverifiedCodeRequests = true
        configuration.fixedSMSCode = "123456"
        configure(&configuration)
        return try IdentityToolkit(configuration: configuration, pusher: nil, clock: clock, stateDirectory: folder)
    }

    func signIn(_ toolkit: IdentityToolkit, _ number: String = number) async throws -> VerifyPhoneNumberResponse {
        let sent = try await toolkit.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: number))
        return try await toolkit.call(ToolkitCalls.signInWithPhoneNumber, VerifyPhoneNumberRequest(sessionInfo: sent.sessionInfo, code: "123456"))
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

    @Test("a spent session is gone at once; an unspent one answers SESSION_EXPIRED for its retention after its 5 minutes, then is gone; the outbox and refresh tokens keep nothing")
    func retention() async throws {
        let clock = ManualWallClock()
        let toolkit = try toolkit(clock)
        for _ in 0..<50 { _ = try await signIn(toolkit) }
        #expect(await toolkit.core.state.refreshTokens.isEmpty, "refresh tokens are sealed, not kept")
        #expect(await toolkit.core.state.projectUsers.byID.count == 1)
        let pending = try await toolkit.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: "+16505550143"))
        clock.advance(by: 301)
        await toolkit.purgeExpired()
        await Self.expectError(.sessionExpired) { () throws(IdentityToolkitError) in
            _ = try await toolkit.call(ToolkitCalls.signInWithPhoneNumber, VerifyPhoneNumberRequest(sessionInfo: pending.sessionInfo, code: "123456"))
        }
        // The 50 spent sessions went as their codes were used; the SMS stay for their lifetime.
        let (sessions, messages) = await (toolkit.core.state.sessions.count, toolkit.messages.count)
        #expect(sessions == 1 && messages == 51)
        clock.advance(by: BackendConfiguration().expiredRetention)
        await toolkit.purgeExpired()
        let (left, sent, latest) = await (toolkit.core.state.sessions.count, toolkit.messages.count, toolkit.core.state.latestSession.count)
        #expect(left == 0 && sent == 0 && latest == 0)
        await Self.expectError(.invalidSessionInfo) { () throws(IdentityToolkitError) in
            _ = try await toolkit.call(ToolkitCalls.signInWithPhoneNumber, VerifyPhoneNumberRequest(sessionInfo: pending.sessionInfo, code: "123456"))
        }
        // The user and its last sign-in stay.
        let user = try #require(await toolkit.core.state.projectUsers.byID.values.first)
        #expect(user.lastLoginAt != nil && user.phoneNumber == Self.number)
    }

    @Test("an SMS quota keeps the day's SMS, so that it counts them")
    func quotas() async throws {
        let clock = ManualWallClock()
        let toolkit = try toolkit(clock) { $0.smsPerNumberPerDay = 2 }
        _ = try await signIn(toolkit)
        _ = try await signIn(toolkit)
        clock.advance(by: 3600)
        await toolkit.purgeExpired()
        await Self.expectError(.quotaExceeded) { () throws(IdentityToolkitError) in
            _ = try await toolkit.sendVerificationCode(SendVerificationCodeRequest(phoneNumber: Self.number))
        }
    }

    @Test("sealed refresh tokens: they refresh; tampered, forged or another key's are INVALID_REFRESH_TOKEN; a deleted or re-made user's USER_NOT_FOUND")
    func sealedRefreshTokens() async throws {
        let clock = ManualWallClock()
        let toolkit = try toolkit(clock)
        let signed = try await signIn(toolkit)
        let token = try #require(signed.refreshToken)
        let refreshed = try await toolkit.secureToken(SecureTokenRequest(grantType: "refresh_token", refreshToken: token))
        #expect(refreshed.userId == signed.localId && refreshed.refreshToken == token)
        // One character changed anywhere: refused.
        for index in [6, token.count / 2, token.count - 2] {
            var bytes = Array(token.utf8)
            bytes[index] = bytes[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            await Self.expectError(.invalidRefreshToken) { () throws(IdentityToolkitError) in
                _ = try await toolkit.secureToken(SecureTokenRequest(grantType: "refresh_token", refreshToken: String(decoding: bytes, as: UTF8.self)))
            }
        }
        // Another backend's key (another project, another state folder): refused.
        let other = try IdentityToolkit(configuration: BackendConfiguration(), pusher: nil, clock: clock)
        let forged = RefreshTokenSeal(signingKeyDER: Array(IDTokenSigner.makeKey().derRepresentation))
            .seal(localId: try #require(signed.localId), userCreatedAt: clock.now, provider: .phone, secondFactor: nil, issuedAt: clock.now, claims: nil, tenant: nil)
        await Self.expectError(.invalidRefreshToken) { () throws(IdentityToolkitError) in
            _ = try await toolkit.secureToken(SecureTokenRequest(grantType: "refresh_token", refreshToken: forged))
        }
        _ = other
        // Deleted, then a new user with the same UID: the token was the old user's.
        _ = try await toolkit.call(ToolkitCalls.adminDelete, DeleteAccountRequest(idToken: nil, localId: signed.localId))
        await Self.expectError(.userNotFound) { () throws(IdentityToolkitError) in
            _ = try await toolkit.secureToken(SecureTokenRequest(grantType: "refresh_token", refreshToken: token))
        }
        clock.advance(by: 1)
        _ = try await toolkit.adminCreateUser(SignUpNewUserRequest(localId: signed.localId, phoneNumber: Self.number))
        await Self.expectError(.userNotFound) { () throws(IdentityToolkitError) in
            _ = try await toolkit.secureToken(SecureTokenRequest(grantType: "refresh_token", refreshToken: token))
        }
    }

    @Test("the journal is rewritten once it doubles: its lines follow the state; a restart and a pre-seal refresh token still work")
    func journalCompaction() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("authsim-retention-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        let clock = ManualWallClock()
        var lines: [Int] = []
        do {
            let toolkit = try toolkit(clock, folder: folder) { $0.journalCompactionLines = 300 }
            for round in 0..<400 {
                _ = try await signIn(toolkit)
                if round % 50 == 49 {
                    clock.advance(by: 1000)
                    lines.append(try String(contentsOf: folder.appendingPathComponent("journal.jsonl"), encoding: .utf8).split(separator: "\n").count)
                }
            }
        }
        // Four records a sign-in, 1,600 in all: the file stays near the floor.
        #expect(lines.allSatisfy { $0 <= 300 + 4 * 50 + 8 }, "\(lines)")
        // A refresh token from before tokens were sealed (a journal record), and the user, after a restart.
        let legacy = "legacy-refresh-token-0123456789"
        let restarted = try toolkit(clock, folder: folder)
        let user = try #require(await restarted.core.state.projectUsers.byID.values.first)
        let record = BackendRecord.refreshToken(digest: BackendCore.digest(legacy), localId: user.localId, provider: .phone, secondFactor: nil,
                                                issuedAt: clock.now)
        let handle = try FileHandle(forWritingTo: folder.appendingPathComponent("journal.jsonl"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(try BackendJournal.encode(record).utf8))
        try handle.close()
        let again = try toolkit(clock, folder: folder)
        let refreshed = try await again.secureToken(SecureTokenRequest(grantType: "refresh_token", refreshToken: legacy))
        #expect(refreshed.userId == user.localId)
        _ = restarted
    }
}
