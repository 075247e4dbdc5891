import DeviceOS
@testable import FirebaseAuthCore
import Foundation
import Testing

/// The app credential's rules on their own, as FirebaseAuth 12.19's unit tests hold them
/// (FirebaseAuth/Tests/Unit/AuthAppCredentialManagerTests.swift): no Auth, no waits, no I/O.
@Suite("The app credential's rules (AuthAppCredentialManager)")
struct AppCredentialBookTests {
    @Test("testCompletion: a mismatched receipt finishes nothing; the matching one completes the credential; the same receipt again has no effect")
    func completion() {
        var book = AppCredentialBook()
        book.expect("RECEIPT")
        #expect(book.credential == nil)
        let result1 = book.complete(receipt: "ANOTHER", secret: "S2")
        #expect(result1 == nil)
        #expect(book.credential == nil)
        let result2 = book.complete(receipt: "RECEIPT", secret: "S")
        #expect(result2 == AppCredential(receipt: "RECEIPT", secret: "S"))
        #expect(book.credential == AppCredential(receipt: "RECEIPT", secret: "S"))
        #expect(book.pending.isEmpty)
        let result3 = book.complete(receipt: "RECEIPT", secret: "S")
        #expect(result3 == nil)
        #expect(book.credential?.secret == "S")
    }

    @Test("testMaximumPendingReceipt: 32 newer receipts push an older one out, and its late push is no longer Auth's")
    func maximumPending() {
        var book = AppCredentialBook()
        book.expect("ANOTHER")
        for i in 1...AppCredentialBook.maximumPending { book.expect("RANDOM_\(i)") }
        #expect(book.pending.count == AppCredentialBook.maximumPending)
        #expect(!book.pending.contains("ANOTHER"))
        let result4 = book.complete(receipt: "ANOTHER", secret: "S")
        #expect(result4 == nil)
        #expect(book.credential == nil)
        let result5 = book.complete(receipt: "RANDOM_1", secret: "S1")
        #expect(result5 != nil)
    }

    @Test("a receipt expected again moves to the newest place; a credential is the receipt's own or none; clear forgets it; a restored book keeps the newest 32")
    func orderingAndRestore() {
        var book = AppCredentialBook()
        book.expect("A")
        book.expect("B")
        book.expect("A")
        #expect(book.pending == ["B", "A"])
        _ = book.complete(receipt: "B", secret: "SB")
        #expect(book.credential(for: "B")?.secret == "SB")
        #expect(book.credential(for: "A") == nil)
        book.clear()
        #expect(book.credential == nil && book.pending == ["A"])
        let restored = AppCredentialBook(pending: (1...40).map { "R\($0)" }, credential: nil)
        #expect(restored.pending.first == "R9" && restored.pending.count == 32)
    }
}

/// The reCAPTCHA presentation's rules on their own (`canHandle(url)`: AuthWebUtils and
/// AuthURLPresenter in FirebaseAuth 12.19): no Auth, no page, no waits.
@Suite("The reCAPTCHA presentation's rules (canHandle(url))")
struct PresentationBookTests {
    let scheme = "app-1-123456789012-ios-a1b2c3d4e5f60718"

    func redirect(event: String, token: String = "TOKEN", scheme: String? = nil) -> URL {
        var callback = URLComponents(string: "https://example.firebaseapp.com/__/auth/callback")!
        callback.queryItems = [URLQueryItem(name: "authType", value: "verifyApp"), URLQueryItem(name: "eventId", value: event),
                               URLQueryItem(name: "recaptchaToken", value: token)]
        var link = URLComponents(string: "\(scheme ?? self.scheme)://firebaseauth/link")!
        link.queryItems = [URLQueryItem(name: "deep_link_id", value: callback.url!.absoluteString)]
        return link.url!
    }

    func refusal(_ decision: PresentationBook.Decision) -> URLRefusal.Code? {
        if case .refuses(let refusal) = decision { refusal.code } else { nil }
    }

    @Test("one page at a time; its redirect ends it with the token; the same redirect again is a replay, not 'no presentation'")
    func oneAtATime() {
        var book = PresentationBook()
        let result6 = book.open(redirect(event: "E1"))
        #expect(refusal(result6) == .noActivePresentation)
        let result7 = book.begin(eventID: "E1", scheme: scheme)
        #expect(result7)
        let result8 = book.begin(eventID: "E2", scheme: scheme)
        #expect(!result8)
        let result9 = book.open(redirect(event: "E1"))
        #expect(result9 == .takes(eventID: "E1", redirect: .token("TOKEN")))
        #expect(book.active == nil)
        let result10 = book.open(redirect(event: "E1"))
        #expect(refusal(result10) == .replayed)
    }

    @Test("while a page is presented: another event, another scheme and a handled event's redirect are refused with their reasons, and the page stays")
    func refusalsKeepThePage() {
        var book = PresentationBook()
        let result11 = book.begin(eventID: "E1", scheme: scheme)
        #expect(result11)
        let result12 = book.open(redirect(event: "E1"))
        #expect(result12 == .takes(eventID: "E1", redirect: .token("TOKEN")))
        let result13 = book.begin(eventID: "E2", scheme: scheme)
        #expect(result13)
        let result14 = book.open(redirect(event: "E3"))
        #expect(refusal(result14) == .eventMismatch)
        let result15 = book.open(redirect(event: "E1"))
        #expect(refusal(result15) == .replayed)
        let result16 = book.open(redirect(event: "E2", scheme: "app-1-other"))
        #expect(refusal(result16) == .wrongScheme)
        #expect(book.active?.eventID == "E2")
    }

    @Test("a closed web view ends its own presentation only; a killed process presents nothing and remembers nothing new")
    func endAndAbandon() {
        var book = PresentationBook()
        let result17 = book.begin(eventID: "E1", scheme: scheme)
        #expect(result17)
        let result18 = book.end(eventID: "E0")
        #expect(!result18)
        let result19 = book.end(eventID: "E1")
        #expect(result19)
        let result20 = book.open(redirect(event: "E1"))
        #expect(refusal(result20) == .replayed)
        let result21 = book.begin(eventID: "E2", scheme: scheme)
        #expect(result21)
        book.abandon()
        #expect(book.active == nil)
        let result22 = book.open(redirect(event: "E2"))
        #expect(refusal(result22) == .noActivePresentation)
    }

    @Test("the handled events are remembered boundedly: the newest 32")
    func boundedMemory() {
        var book = PresentationBook()
        for i in 1...(PresentationBook.maximumFinished + 5) {
            let result23 = book.begin(eventID: "E\(i)", scheme: scheme)
            #expect(result23)
            let result24 = book.end(eventID: "E\(i)")
            #expect(result24)
        }
        #expect(book.finished.count == PresentationBook.maximumFinished)
        let result25 = book.open(redirect(event: "E1"))
        #expect(refusal(result25) == .noActivePresentation)
        let result26 = book.open(redirect(event: "E37"))
        #expect(refusal(result26) == .replayed)
    }
}
