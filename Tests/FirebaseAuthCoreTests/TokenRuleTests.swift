@testable import FirebaseAuthCore
import Foundation
import Testing

/// The APNs token's and the ID token's rules as values, as FirebaseAuth 12.19's unit tests hold
/// them: FirebaseAuth/Tests/Unit/AuthAPNSTokenManagerTests.swift (testSetToken, testCallback,
/// testCancel, testTimeout) and FirebaseAuth/Tests/Unit/TokenRefreshCoalescerTests.swift (one
/// refresh for concurrent callers), with SecureTokenService's five-minute margin.
@Suite("Auth's token rules (AuthAPNSTokenManager, SecureTokenService)")
struct TokenRuleTests {
    static let token = AuthAPNSToken(data: Data("qwerty".utf8), type: .sandbox)

    @Test("testCallback: the first ask registers, later asks wait with it, the token ends every wait, and asks after it are answered at once")
    func callback() {
        var book = APNSTokenBook<String>()
        #expect(book.token == nil)
        #expect(book.ask("first") == .wait(number: 1, register: true))
        #expect(book.ask("second") == .wait(number: 2, register: false))
        #expect(book.set(Self.token) == ["first", "second"])
        #expect(book.token == Self.token && book.waitingCount == 0)
        #expect(book.ask("third") == .token(Self.token))
    }

    @Test("testCancel: the OS's failure to register ends every wait once; a second cancel ends none; the next ask registers again")
    func cancel() {
        var book = APNSTokenBook<String>()
        _ = book.ask("first")
        #expect(book.cancel() == ["first"])
        #expect(book.cancel().isEmpty)
        #expect(book.token == nil)
        #expect(book.ask("again") == .wait(number: 2, register: true))
    }

    @Test("testTimeout: a wait that timed out leaves (once), a cancel after it ends nothing, and the next ask registers again")
    func timeout() {
        var book = APNSTokenBook<String>()
        guard case .wait(let number, true) = book.ask("first") else { Issue.record("the first ask does not register"); return }
        let left = book.timedOut(number)
        let leftTwice = book.timedOut(number)
        #expect(left && !leftTwice)
        #expect(book.cancel().isEmpty)
        #expect(book.ask("next") == .wait(number: number + 1, register: true))
    }

    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("the ID token is used as held until five minutes before it expires; unknown expiry and forceRefresh refresh")
    func margin() {
        var fresh = IDTokenBook<String>(idToken: "ID", refreshToken: "R", expiration: Self.now.addingTimeInterval(5 * 60 + 1))
        #expect(fresh.next(now: Self.now, forceRefresh: false, start: { "refresh" }) == .use("ID"))
        #expect(fresh.next(now: Self.now, forceRefresh: true, start: { "refresh" }) == .refresh("refresh"))
        #expect(fresh.refreshToken == "R")
        var closing = IDTokenBook<String>(idToken: "ID", refreshToken: "R", expiration: Self.now.addingTimeInterval(5 * 60))
        #expect(closing.next(now: Self.now, forceRefresh: false, start: { "refresh" }) == .refresh("refresh"))
        var unknown = IDTokenBook<String>(idToken: "ID", refreshToken: "R", expiration: nil)
        #expect(unknown.next(now: Self.now, forceRefresh: false, start: { "refresh" }) == .refresh("refresh"))
    }

    @Test("TokenRefreshCoalescer: callers during a refresh join it; after it ends the new token is used; a failed one lets the next caller retry")
    func coalesce() {
        var book = IDTokenBook<String>(idToken: "OLD", refreshToken: "R1", expiration: nil)
        #expect(book.next(now: Self.now, forceRefresh: false, start: { "first" }) == .refresh("first"))
        #expect(book.refreshToken == "R1")
        #expect(book.next(now: Self.now, forceRefresh: false, start: { "second" }) == .join("first"))
        #expect(book.next(now: Self.now, forceRefresh: true, start: { "second" }) == .join("first"))
        book.refreshed(idToken: "NEW", refreshToken: "R2", expiresIn: 3600, now: Self.now)
        book.refreshEnded()
        #expect(book.next(now: Self.now, forceRefresh: false, start: { "second" }) == .use("NEW"))
        #expect(book.refreshToken == "R2" && book.expiration == Self.now.addingTimeInterval(3600))
        // A refresh that failed: nothing changes, and the next caller starts another.
        #expect(book.next(now: Self.now, forceRefresh: true, start: { "third" }) == .refresh("third"))
        #expect(book.refreshToken == "R2")
        book.refreshEnded()
        #expect(book.refreshing == nil)
        #expect(book.next(now: Self.now, forceRefresh: true, start: { "fourth" }) == .refresh("fourth"))
        #expect(book.refreshToken == "R2")
    }

    @Test("an answer without a refresh token keeps the old one; without expiresIn the expiry is unknown (the next use refreshes)")
    func replacement() {
        var book = IDTokenBook<String>(idToken: "ID", refreshToken: "R", expiration: Self.now)
        book.refreshed(idToken: "ID2", refreshToken: "", expiresIn: nil, now: Self.now)
        #expect(book.idToken == "ID2" && book.refreshToken == "R" && book.expiration == nil)
        book.adopt(idToken: "ID3", refreshToken: nil, expiration: Self.now.addingTimeInterval(3600))
        #expect(book.refreshToken == "R")
        #expect(book.next(now: Self.now, forceRefresh: false, start: { "refresh" }) == .use("ID3"))
    }
}
