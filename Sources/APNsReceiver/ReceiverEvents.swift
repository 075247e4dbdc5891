import APNsWire

/// Something the receiver did, for timelines and `authsim explain`.
public enum ReceiverEvent: Sendable {
    case accepted(AcceptedPush)
    case rejected(PushRejection, apnsID: String, environment: APNsEnvironment, deviceToken: String)
    case fault(Fault, environment: APNsEnvironment)
    case connection(environment: APNsEnvironment, serverName: String?, tls: Bool)
    /// A connection that did not finish TLS and the HTTP/2 preface in time was closed.
    case handshakeTimedOut(seconds: Double)
}

/// An optional observer of receiver events; without one, nothing is recorded (nothing grows under load).
struct ReceiverEvents: Sendable {
    let observer: (@Sendable (ReceiverEvent) -> Void)?
    func record(_ event: @autoclosure () -> ReceiverEvent) {
        if let observer { observer(event()) }
    }
}
