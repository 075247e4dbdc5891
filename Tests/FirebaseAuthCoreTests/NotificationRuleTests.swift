@testable import FirebaseAuthCore
import Foundation
import Testing

/// What a notification is to Auth and the forwarding probe's once-per-process rule, as
/// FirebaseAuth 12.19's unit tests hold them (FirebaseAuth/Tests/Unit/AuthNotificationManagerTests.swift).
@Suite("Auth's notifications and the forwarding probe (AuthNotificationManager)")
struct NotificationRuleTests {
    @Test("testPassingToCredentialManager: a receipt and a secret, as a dictionary or a JSON string of one")
    func credential() throws {
        let payload = ["receipt": "RECEIPT", "secret": "SECRET"]
        #expect(AuthNotification.read(["com.google.firebase.auth": payload]) == .credential(receipt: "RECEIPT", secret: "SECRET"))
        let text = String(decoding: try JSONSerialization.data(withJSONObject: payload), as: UTF8.self)
        #expect(AuthNotification.read(["com.google.firebase.auth": text]) == .credential(receipt: "RECEIPT", secret: "SECRET"))
        #expect(AuthNotification.read(["com.google.firebase.auth": ["warning": AuthNotification.probeWarning]]) == .probe)
        // Any `warning` is the probe, whatever it says (AuthNotificationManager.swift 174–188; audit 3, D1.3).
        #expect(AuthNotification.read(["com.google.firebase.auth": ["warning": "another"]]) == .probe)
    }

    @Test("testNotHandling: another key, a string that is not JSON, a missing secret or receipt, another payload are not Auth's")
    func notAuths() {
        for userInfo: [AnyHashable: Any] in [["random": "string"], ["com.google.firebase.auth": "something wrong"],
                                             ["com.google.firebase.auth": ["receipt": "RECEIPT"]], ["com.google.firebase.auth": ["secret": "SECRET"]],
                                             ["com.google.firebase.auth": ["error": "asdf"]]] {
            #expect(AuthNotification.read(userInfo) == .notAuths, "\(userInfo)")
        }
    }

    @Test("testCachedResult: the probe runs once; a caller while it runs waits; later callers get its result without a second probe")
    func probeOnce() {
        var probe = ForwardingProbe<String>()
        #expect(probe.running == nil)
        let first = probe.next(start: { "probe" })
        #expect(first == .run("probe"))
        #expect(probe.running == "probe")
        let second = probe.next(start: { "another" })
        #expect(second == .wait("probe"))
        probe.finish(false)
        #expect(probe.running == nil)
        let later = probe.next(start: { "another" })
        #expect(later == .result(false))
    }

    /// Audit 3, D1.3: `canHandle(notification:)` takes a probe while the check is not done
    /// (`hasCheckedNotificationForwarding` false), one before the check too, which notes that
    /// notifications are forwarded; after the check it is not Auth's (AuthNotificationManager.swift 174–188).
    @Test("a probe before the check is Auth's and makes the check pass; during it, Auth's; after it, not Auth's")
    func probeBeforeCheck() {
        var probe = ForwardingProbe<String>()
        #expect(probe.probeArrived() == (true, nil))
        #expect(probe.next(start: { "probe" }) == .run("probe"))
        let during = probe.probeArrived()
        #expect(during.handled && during.wait == "probe")
        #expect(probe.probeArrived().handled, "a second probe while it runs is Auth's too")
        probe.finish(false)  // its own probe never came back: the earlier one counts
        #expect(probe.next(start: { "again" }) == .result(true))
        #expect(probe.probeArrived() == (false, nil))
    }
}
