import APNsReceiver
import APNsSender
import APNsWire
import DeviceLink
import Foundation
import LocalPKI
import Utilities

/// The outcome a run expects or got: an APNs answer, and whether the app's delegate got the push.
package struct ChannelOutcome: Sendable, Hashable, CustomStringConvertible {
    package var status: Int
    package var reason: APNsReason?
    package var delivered: Bool

    package init(status: Int, reason: APNsReason? = nil, delivered: Bool) {
        self.status = status
        self.reason = reason
        self.delivered = delivered
    }

    package var description: String {
        "\(status)\(reason.map { " \($0)" } ?? "")\(delivered ? ", delivered to the app" : ", not delivered")"
    }
}

/// One APNs-channel scenario: a real failure users hit, and what should happen.
package struct ChannelScenario: Sendable {
    package let name: String
    package let summary: String
    package let expected: ChannelOutcome
    let run: @Sendable (ChannelScenarioContext) async throws -> ChannelOutcome
}

/// What a scenario runs against.
package struct ChannelScenarioContext: Sendable {
    package let channel: LocalAPNsChannel
    package let timeline: Timeline
}

/// A finished scenario.
package struct ChannelScenarioResult: Sendable {
    package let scenario: ChannelScenario
    package let actual: ChannelOutcome?
    package let error: String?
    package let timeline: [TimelineEvent]
    package var passed: Bool { actual == scenario.expected }
}

/// The APNs-channel scenarios `authsim demo` runs today. (Phone-auth and reCAPTCHA scenarios
/// join them as the auth core and the redirect interceptor land.)
package enum ChannelDemo {
    static let bundleID = "com.example.authsim"
    static let silentPayload = Array("""
        {"aps":{"content-available":1},"com.google.firebase.auth":{"receipt":"AEFDNu9QZBdycrEZ8bM_2-Ei5kpQ3G2Xc8a","secret":"8vV2QpTzX1s"}}
        """.utf8)

    package static let scenarios: [ChannelScenario] = [
        ChannelScenario(
            name: "apns-silent-push",
            summary: "A debug build registers a sandbox token; the backend's silent push reaches the app's delegate.",
            expected: ChannelOutcome(status: 200, delivered: true)
        ) { context in
            try await pushToFreshDevice(context, tokenEnvironment: .sandbox, sendTo: .sandbox)
        },
        ChannelScenario(
            name: "apns-sandbox-token-to-production",
            summary: "A debug build's sandbox token is pushed through production (the app said type .prod): BadDeviceToken.",
            expected: ChannelOutcome(status: 400, reason: .badDeviceToken, delivered: false)
        ) { context in
            try await pushToFreshDevice(context, tokenEnvironment: .sandbox, sendTo: .production)
        },
        ChannelScenario(
            name: "apns-production-token-to-sandbox",
            summary: "A TestFlight build's production token is pushed through sandbox: BadDeviceToken.",
            expected: ChannelOutcome(status: 400, reason: .badDeviceToken, delivered: false)
        ) { context in
            try await pushToFreshDevice(context, tokenEnvironment: .production, sendTo: .sandbox)
        },
        ChannelScenario(
            name: "apns-key-and-team-swapped",
            summary: "The provider put the team ID where the key ID goes, and the key ID as issuer: InvalidProviderToken.",
            expected: ChannelOutcome(status: 403, reason: .invalidProviderToken, delivered: false)
        ) { context in
            let key = context.channel.credentials.authKey
            let swapped = try APNsAuthKey(keyID: key.teamID, teamID: key.keyID, privateKey: key.privateKey)
            return try await pushToFreshDevice(context, tokenEnvironment: .sandbox, sendTo: .sandbox, key: swapped)
        },
        ChannelScenario(
            name: "apns-provider-clock-behind",
            summary: "The provider's clock is an hour and a minute behind, so its token is born stale: ExpiredProviderToken.",
            expected: ChannelOutcome(status: 403, reason: .expiredProviderToken, delivered: false)
        ) { context in
            try await pushToFreshDevice(context, tokenEnvironment: .sandbox, sendTo: .sandbox, clockOffset: -3660)
        },
        ChannelScenario(
            name: "apns-app-uninstalled",
            summary: "The user deleted the app; APNs says the token is no longer active: 410 Unregistered.",
            expected: ChannelOutcome(status: 410, reason: .unregistered, delivered: false)
        ) { context in
            try await pushToFreshDevice(context, tokenEnvironment: .sandbox, sendTo: .sandbox, uninstalled: true)
        },
    ]

    static func pushToFreshDevice(_ context: ChannelScenarioContext, tokenEnvironment: APNsEnvironment,
                                  sendTo environment: APNsEnvironment, key: APNsAuthKey? = nil,
                                  clockOffset: Int = 0, uninstalled: Bool = false) async throws -> ChannelOutcome {
        let channel = context.channel
        let timeline = context.timeline
        let token = DeviceToken.random()
        let app = RecordingApp(bundleID: bundleID)
        try channel.register(token, environment: tokenEnvironment, bundleID: bundleID)
        await channel.hub.install(app, token: token, environment: tokenEnvironment)
        // Each step with its fact, so that `authsim explain` reads these runs as it reads sign-ins.
        timeline.record(.device, "registers for remote notifications: APNs \(tokenEnvironment) issues token \(token.short) for \(bundleID)",
                        .deviceToken(token: token.hex, environment: tokenEnvironment, bundleID: bundleID, simulator: false))
        if uninstalled {
            try channel.registry.invalidate(token, in: tokenEnvironment, as: .unregistered, at: Date())
            timeline.record(.device, "the app is deleted; APNs marks \(token.short) unregistered")
        }
        let client = try channel.client(environment: environment, key: key, clock: OffsetWallClock(offset: TimeInterval(clockOffset)))
        defer { Task { await client.shutdown() } }
        let signer = (key ?? channel.credentials.authKey)
        let trusted = channel.credentials.authKey
        timeline.record(.sender, "POST /3/device/\(token.short) to \(environment.appleHost) (background, priority 5), token kid=\(signer.keyID) iss=\(signer.teamID)",
                        .providerSetup(keyID: signer.keyID, teamID: signer.teamID, trustedKeyID: trusted.keyID, trustedTeamID: trusted.teamID,
                                       providerClockOffset: clockOffset))
        let headers = PushHeaders(pushType: .background, topic: bundleID, priority: .consideringPower)
        let response = try await client.send(PushRequest(deviceToken: token, headers: headers, payload: silentPayload))
        var line = "answers \(response.status)"
        if let reason = response.reason { line += " \(reason)" }
        if let id = response.apnsID { line += " apns-id=\(id)" }
        timeline.record(.receiver, line)
        var delivered = false
        if response.isSuccess, let push = await app.firstPush(timeout: .seconds(2)) {
            delivered = true
            timeline.record(.device, "delivers the push to \(bundleID): application(_:didReceiveRemoteNotification:) gets \(push.payload.count) bytes with com.google.firebase.auth",
                            .pushDelivered(token: token.hex, handled: true))
        }
        return ChannelOutcome(status: response.status, reason: response.reason, delivered: delivered)
    }

    /// Runs the scenarios against one local channel. `printer` sees each timeline step as it happens.
    package static func run(certs: URL, state: URL, only names: [String] = [],
                           onStart: @Sendable (ChannelScenario, LocalAPNsChannel) -> Void = { _, _ in },
                           printer: (@Sendable (TimelineEvent) -> Void)? = nil) async throws -> [ChannelScenarioResult] {
        let current = CurrentTimeline(printer: printer)
        let channel = try await LocalAPNsChannel.start(certs: certs, state: state, observer: { event in
            switch event {
            case .rejected(let rejection, _, let environment, let token):
                current.record(.receiver, "\(environment) rejects: \(rejection.reason): \(rejection.detail)",
                               .pushRejected(token: token.lowercased(), environment: environment, reason: rejection.reason,
                                             status: rejection.reason.status, detail: rejection.detail))
            case .accepted(let push):
                current.record(.receiver, "\(push.environment) accepts the push for \(push.bundleID), writes it to the delivery log",
                               .pushAccepted(token: push.deviceToken.hex, environment: push.environment))
            case .connection(let environment, let serverName, _):
                current.record(.receiver, "TLS connection, SNI \(serverName ?? "none") → \(environment)")
            case .fault(let fault, _):
                current.record(.receiver, "injects fault \(fault)")
            case .handshakeTimedOut(let seconds):
                current.record(.receiver, "closes a connection that did not finish TLS and the HTTP/2 preface in \(seconds) s")
            case .idledOut(let seconds, let environment):
                current.record(.receiver, "\(environment) sends GOAWAY IdleTimeout to a connection idle for \(seconds) s")
            case .refused: break  // .rejected tells it
            }
        })
        var results: [ChannelScenarioResult] = []
        for scenario in scenarios where names.isEmpty || names.contains(scenario.name) {
            onStart(scenario, channel)
            let timeline = current.begin()
            do {
                let outcome = try await scenario.run(ChannelScenarioContext(channel: channel, timeline: timeline))
                results.append(ChannelScenarioResult(scenario: scenario, actual: outcome, error: nil, timeline: timeline.all))
            } catch {
                timeline.record(.authsim, "error: \(error)")
                results.append(ChannelScenarioResult(scenario: scenario, actual: nil, error: "\(error)", timeline: timeline.all))
            }
        }
        current.end()
        await channel.shutdown()
        return results
    }
}
