import APNsWire
import Foundation

/// Something the receiver did, for timelines and `authsim explain`.
package enum ReceiverEvent: Sendable {
    case accepted(AcceptedPush)
    case rejected(PushRejection, apnsID: String, environment: APNsEnvironment, deviceToken: String)
    case fault(Fault, environment: APNsEnvironment)
    case connection(environment: APNsEnvironment, serverName: String?, tls: Bool)
    /// A connection that did not finish TLS and the HTTP/2 preface in time was closed.
    case handshakeTimedOut(seconds: Double)
    /// A connection without traffic for the policy's idle timeout got GOAWAY `IdleTimeout` and is closing.
    case idledOut(seconds: Double, environment: APNsEnvironment)
    /// A request answered with an error, as it came (headers, the provider token among them, and
    /// payload): what the inspector shows. Recorded beside ``rejected(_:apnsID:environment:deviceToken:)``,
    /// and for a fault's injected rejection too.
    case refused(RefusedRequest)
}

/// A request the receiver answered with an error, with what it carried.
package struct RefusedRequest: Sendable {
    package var receivedAt: Date
    package var environment: APNsEnvironment
    package var apnsID: String
    /// As the path had it (maybe not hex).
    package var deviceToken: String
    /// Regular headers, names lowercase, in arrival order.
    package var headers: [(name: String, value: String)]
    package var payload: [UInt8]
    package var rejection: PushRejection
    /// A fault rule made the receiver refuse it.
    package var injected: Bool

    package init(receivedAt: Date, environment: APNsEnvironment, apnsID: String, deviceToken: String, headers: [(name: String, value: String)],
                payload: [UInt8], rejection: PushRejection, injected: Bool) {
        self.receivedAt = receivedAt
        self.environment = environment
        self.apnsID = apnsID
        self.deviceToken = deviceToken
        self.headers = headers
        self.payload = payload
        self.rejection = rejection
        self.injected = injected
    }

    package func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
}

/// An optional observer of receiver events; without one, nothing is recorded (nothing grows under load).
struct ReceiverEvents: Sendable {
    let observer: (@Sendable (ReceiverEvent) -> Void)?
    /// Whether `.accepted` events go to the observer (``PushReceiverConfiguration/observesAcceptedPushes``).
    var observesAccepted = true

    func record(_ event: @autoclosure () -> ReceiverEvent) {
        if let observer { observer(event()) }
    }

    /// Records `.accepted` for the push, if the observer hears of accepted pushes.
    func recordAccepted(_ push: @autoclosure () -> AcceptedPush) {
        if observesAccepted, let observer { observer(.accepted(push())) }
    }
}
