import APNsWire
import AuthBackend
import Causes
import Foundation
import IdentityToolkitAPI
import Inspector
import Scenarios
import Testing

/// A sign-in has one vocabulary: the backend's events (``BackendEvent``) are worded once
/// (``BackendEvent/line``) and drawn so by the scenarios' timelines and the inspector's sign-ins;
/// their causes come from ``Causes`` for both `explain` and the inspector.
@Suite("One vocabulary: timelines and the inspector's sign-ins")
struct OneVocabularyTests {
    static let token = "ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12"
    static let number = "+16505550101"
    /// A silent push refused with BadDeviceToken, the reCAPTCHA fallback's code request, a wrong code.
    static let events: [BackendEvent] = [
        .recaptchaConfig(phone: .off),
        .pushing(appToken: token, environment: .production, receipt: "R1"),
        .verifyClient(appToken: token, environment: .production, receipt: "R1", push: PushResult(status: 400, reason: .badDeviceToken)),
        .codeRequested(phoneNumber: number, proof: .reCAPTCHA, receipt: nil, endpoint: .sendVerificationCode),
        .codeReused(phoneNumber: number),
        .rejected(endpoint: .signInWithPhoneNumber, IdentityToolkitError(.invalidCode), cause: nil),
    ]

    @Test("each backend event is drawn in the same words by a timeline and by the inspector's sign-ins")
    func sameWords() {
        let timeline = Timeline()
        let flows = FlowHistory()
        for event in Self.events {
            ScenarioRunner.record(event, into: timeline)
            flows.record(event)
        }
        let drawn = Set(timeline.all.map(\.message))
        let steps = flows.all.flatMap(\.steps)
        #expect(steps.map(\.event) == Self.events.map(\.kind))
        // The timeline keeps each event as it is: no fact of its own made from it.
        #expect(timeline.all.compactMap(\.backend) == Self.events)
        for (step, event) in zip(steps, Self.events) {
            #expect(step.message == event.line.text)
            #expect(drawn.contains(step.message), "the timeline does not draw \(step.message)")
        }
    }

    @Test("a sign-in's facts are typed and its causes are Causes': the refused push's, then the refused code's, in one sign-in")
    func typedFlow() throws {
        let flows = FlowHistory()
        for event in Self.events.prefix(3) { flows.record(event) }
        // The push's flow: the receipt tied the answer to it; the cause is PushRefusals'.
        let push = try #require(flows.all.first)
        #expect(flows.all.count == 1 && push.steps.map(\.event) == ["recaptchaConfig", "pushing", "verifyClient"])
        #expect(push.steps.last?.bad == true && push.steps.last?.from == .apns && push.steps.last?.to == .backend)
        let refusal = PushRefusals.diagnose(token: Self.token, sentTo: .production, reason: .badDeviceToken, detail: nil)
        #expect(push.cause == refusal.cause && push.fix == refusal.fix && push.outcome == .inProgress)
        // The fallback's code request names no push: it continues the one sign-in waiting for a
        // code (issue 63, N4: it was a row of its own), and ends with the wrong code.
        for event in Self.events.dropFirst(3) { flows.record(event) }
        let all = flows.all
        try #require(all.count == 1, "\(all.map(\.steps))")
        let code = all[0]
        #expect(code.steps.map(\.event) == Self.events.map(\.kind))
        #expect(code.proof == .reCAPTCHA && code.secondFactor == false && code.path == "reCAPTCHA" && code.deviceToken == Self.token)
        #expect(code.outcome == .refused(.invalidCode) && code.outcome.description == "refused: INVALID_CODE")
        let wrong = BackendRefusals.diagnose(endpoint: "signInWithPhoneNumber", error: .invalidCode, detail: nil, cause: nil, message: "")
        #expect(code.cause == wrong.cause && code.fix == wrong.fix)
    }

    @Test("a reCAPTCHA code request starts its own sign-in when no push waits for one, when two do, or when the push is over ten minutes old")
    func fallbackAmbiguity() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        func push(_ flows: FlowHistory, _ receipt: String, at time: Date) {
            flows.record(.pushing(appToken: Self.token, environment: .sandbox, receipt: receipt), at: time)
            flows.record(.verifyClient(appToken: Self.token, environment: .sandbox, receipt: receipt, push: PushResult(status: 200)), at: time)
        }
        let code = BackendEvent.codeRequested(phoneNumber: Self.number, proof: .reCAPTCHA, receipt: nil, endpoint: .sendVerificationCode)

        let none = FlowHistory()
        none.record(code, at: start)
        #expect(none.all.count == 1)

        let two = FlowHistory()
        push(two, "R1", at: start)
        push(two, "R2", at: start.addingTimeInterval(1))
        two.record(code, at: start.addingTimeInterval(6))
        #expect(two.all.count == 3 && two.all[0].phoneNumber == nil && two.all[1].phoneNumber == nil)

        let late = FlowHistory()
        push(late, "R1", at: start)
        late.record(code, at: start.addingTimeInterval(FlowHistory.fallbackWindow + 1))
        #expect(late.all.count == 2)

        // A silent-push code request is tied by its receipt, never by this rule.
        let answered = FlowHistory()
        push(answered, "R1", at: start)
        answered.record(.codeRequested(phoneNumber: Self.number, proof: .silentPush, receipt: "R1", endpoint: .sendVerificationCode), at: start)
        answered.record(code, at: start.addingTimeInterval(6))
        #expect(answered.all.count == 2 && answered.all[0].proof == .silentPush && answered.all[1].proof == .reCAPTCHA)
    }
}
