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

    @Test("a sign-in's facts are typed and its causes are Causes': the refused push's and the refused code's")
    func typedFlow() throws {
        let flows = FlowHistory()
        for event in Self.events { flows.record(event) }
        let all = flows.all
        try #require(all.count == 2)
        // The push's flow: the receipt tied the answer to it; the cause is PushRefusals'.
        let push = all[0]
        #expect(push.steps.map(\.event) == ["recaptchaConfig", "pushing", "verifyClient"])
        #expect(push.steps.last?.bad == true && push.steps.last?.from == .apns && push.steps.last?.to == .backend)
        let refusal = PushRefusals.diagnose(token: Self.token, sentTo: .production, reason: .badDeviceToken, detail: nil)
        #expect(push.cause == refusal.cause && push.fix == refusal.fix)
        // The fallback's code request (no receipt: a flow of its own) ends with the wrong code.
        let code = all[1]
        #expect(code.proof == .reCAPTCHA && code.secondFactor == false && code.path == "reCAPTCHA")
        #expect(code.outcome == .refused(.invalidCode) && code.outcome.description == "refused: INVALID_CODE")
        let wrong = BackendRefusals.diagnose(endpoint: "signInWithPhoneNumber", error: .invalidCode, detail: nil, cause: nil, message: "")
        #expect(code.cause == wrong.cause && code.fix == wrong.fix)
    }
}
