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

    /// The sign-in the events are steps of, as the backend's rules gave it.
    static let signIn = SignInID(rawValue: "S1gnInS1gnInS1gn")

    static func record(_ event: BackendEvent, _ signIn: SignInID = Self.signIn, into flows: FlowHistory, at time: Date = Date()) {
        flows.record(event, signIn: event.isSignInStep ? signIn : nil, at: time)
    }

    @Test("each backend event is drawn in the same words by a timeline and by the inspector's sign-ins")
    func sameWords() {
        let timeline = Timeline()
        let flows = FlowHistory()
        for event in Self.events {
            ScenarioRunner.record(event, signIn: event.isSignInStep ? Self.signIn : nil, into: timeline)
            Self.record(event, into: flows)
        }
        let drawn = Set(timeline.all.map(\.message))
        let steps = flows.all.flatMap(\.steps)
        #expect(steps.map(\.event) == Self.events.map(\.kind))
        // The timeline keeps each event as it is, with its sign-in: no fact of its own made from it.
        #expect(timeline.all.compactMap(\.backend) == Self.events)
        #expect(timeline.all.filter { $0.backend != nil }.map(\.signIn) == Self.events.map { $0.isSignInStep ? Self.signIn : nil })
        for (step, event) in zip(steps, Self.events) {
            #expect(step.message == event.line.text)
            #expect(drawn.contains(step.message), "the timeline does not draw \(step.message)")
        }
    }

    @Test("a sign-in's facts are typed and its causes are Causes': the refused push's, then the refused code's, in one sign-in")
    func typedFlow() throws {
        let flows = FlowHistory()
        for event in Self.events.prefix(3) { Self.record(event, into: flows) }
        // The push's flow, its config read first; the cause is PushRefusals'.
        let push = try #require(flows.all.first)
        #expect(flows.all.count == 1 && push.steps.map(\.event) == ["recaptchaConfig", "pushing", "verifyClient"])
        #expect(push.signIn == Self.signIn.rawValue)
        #expect(push.steps.last?.bad == true && push.steps.last?.from == .apns && push.steps.last?.to == .backend)
        let refusal = PushRefusals.diagnose(token: Self.token, sentTo: .production, reason: .badDeviceToken, detail: nil)
        #expect(push.cause == refusal.cause && push.fix == refusal.fix && push.outcome == .inProgress)
        // The fallback's code request carries the push's sign-in (the backend tied its reCAPTCHA
        // token to the push), and the sign-in ends with the wrong code.
        for event in Self.events.dropFirst(3) { Self.record(event, into: flows) }
        let all = flows.all
        try #require(all.count == 1, "\(all.map(\.steps))")
        let code = all[0]
        #expect(code.steps.map(\.event) == Self.events.map(\.kind))
        #expect(code.proof == .reCAPTCHA && code.secondFactor == false && code.path == "reCAPTCHA" && code.deviceToken == Self.token)
        #expect(code.outcome == .refused(.invalidCode) && code.outcome.description == "refused: INVALID_CODE")
        let wrong = BackendRefusals.diagnose(endpoint: "signInWithPhoneNumber", error: .invalidCode, detail: nil, cause: nil, message: "")
        #expect(code.cause == wrong.cause && code.fix == wrong.fix)
    }

    @Test("sign-ins at once are one row each, by their IDs, whatever the order of their steps; an event of no sign-in is no row")
    func interleaved() throws {
        let flows = FlowHistory()
        let other = SignInID(rawValue: "0therS1gnIn0ther")
        let otherNumber = "+16505550102"
        Self.record(.pushing(appToken: Self.token, environment: .sandbox, receipt: "R1"), into: flows)
        Self.record(.codeRequested(phoneNumber: otherNumber, proof: .testMode, receipt: nil, endpoint: .sendVerificationCode), other, into: flows)
        Self.record(.verifyClient(appToken: Self.token, environment: .sandbox, receipt: "R1", push: PushResult(status: 200)), into: flows)
        Self.record(.accountDeleted(uid: "u0"), into: flows)
        Self.record(.rejected(endpoint: .signInWithPhoneNumber, IdentityToolkitError(.invalidCode), cause: nil), other, into: flows)
        Self.record(.codeRequested(phoneNumber: Self.number, proof: .silentPush, receipt: "R1", endpoint: .sendVerificationCode), into: flows)
        Self.record(.signedIn(uid: "u1", phoneNumber: Self.number, isNewUser: true), into: flows)
        let all = flows.all
        try #require(all.count == 2, "\(all.map(\.steps))")
        #expect(all[0].signIn == Self.signIn.rawValue && all[0].steps.map(\.event) == ["pushing", "verifyClient", "codeRequested", "signedIn"])
        #expect(all[0].outcome == .signedIn && all[0].phoneNumber == Self.number && all[0].uid == "u1")
        #expect(all[1].signIn == other.rawValue && all[1].steps.map(\.event) == ["codeRequested", "rejected"])
        #expect(all[1].outcome == .refused(.invalidCode) && all[1].phoneNumber == otherNumber)
    }
}
