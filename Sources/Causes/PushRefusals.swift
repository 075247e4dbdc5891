import APNsWire

/// A silent push that APNs refused, or that got no answer, with its cause and fix: what
/// `authsim explain` says of a run whose push was refused and what the inspector shows beside
/// the sign-in it belonged to. The one place that states them (the receiver's own tally of
/// refusals, over many pushes, is ``ReceiverStateExplainer``).
package enum PushRefusals {
    /// The causes ``diagnose(token:sentTo:reason:detail:context:)`` names.
    package static let codes: [Diagnosis.Code] = [.tokenTypeMismatch, .badDeviceToken, .keyAndTeamSwapped, .invalidProviderToken,
                                                 .expiredProviderToken, .pushRejected]

    /// The provider token's set-up, as the scenario gave it.
    package struct ProviderSetup: Sendable, Hashable {
        package var keyID, teamID, trustedKeyID, trustedTeamID: String
        /// Seconds the backend's clock is off (negative: behind).
        package var clockOffset: Int
        package init(keyID: String, teamID: String, trustedKeyID: String, trustedTeamID: String, clockOffset: Int) {
            self.keyID = keyID
            self.teamID = teamID
            self.trustedKeyID = trustedKeyID
            self.trustedTeamID = trustedTeamID
            self.clockOffset = clockOffset
        }
    }

    /// What else is known of the run, each `nil` when not: the fuller the context, the more
    /// precise the cause (the inspector sees only the backend; a run's timeline sees the app).
    package struct Context: Sendable {
        /// Where the device's token was issued.
        package var issuedIn: APNsEnvironment?
        /// The token type the app declared (`setAPNSToken`), what the SDK resolved it to, and
        /// the provisioning profile's `aps-environment` (`none`: no profile).
        package var declared: (type: String, resolved: String, aps: String)?
        package var provider: ProviderSetup?
        /// Said after the cause when the push guarded a second factor.
        package var forSecondFactor: String

        package init(issuedIn: APNsEnvironment? = nil, declared: (type: String, resolved: String, aps: String)? = nil,
                    provider: ProviderSetup? = nil, forSecondFactor: String = "") {
            self.issuedIn = issuedIn
            self.declared = declared
            self.provider = provider
            self.forSecondFactor = forSecondFactor
        }
    }

    /// Why APNs (`sentTo`) refused the push to `token` with `reason`, and the fix.
    package static func diagnose(token: String, sentTo: APNsEnvironment, reason: APNsReason, detail: String?, context: Context = Context()) -> Diagnosis {
        let short = token.prefix(4).uppercased() + "…"
        switch reason {
        case .badDeviceToken:
            if let issued = context.issuedIn, issued != sentTo {
                let origin = issued == .sandbox ? "a debug build" : "a TestFlight / App Store build"
                let right = issued == .sandbox ? ".sandbox" : ".prod"
                let profile = context.declared.flatMap { $0.aps == "none" ? nil : $0.aps }
                guard let type = context.declared?.type else {
                    // No app in the run (a push alone): what was declared is not known.
                    return Diagnosis(.tokenTypeMismatch,
                                     cause: "the push to \(short) was rejected by \(sentTo) with BadDeviceToken: the token was issued in \(issued) (\(origin)) but sent to \(sentTo), so the app's declared token type (setAPNSToken) or the provider's APNs host is wrong\(context.forSecondFactor)",
                                     fix: "send \(issued) tokens to \(issued.appleHost); in the app, call setAPNSToken(token, type: \(right)) in this build, or type: .unknown to let the SDK read aps-environment from embedded.mobileprovision")
                }
                let typeText = type == "unknown" ? ".unknown (resolved to .\(context.declared?.resolved ?? type))" : ".\(type)"
                return Diagnosis(.tokenTypeMismatch,
                                 cause: "the push to \(short) was rejected by \(sentTo) with BadDeviceToken: the token was issued in \(issued) (\(origin)\(profile.map { ", provisioning profile aps-environment=\($0)" } ?? "")) but the app declared type \(typeText), so no silent push came and the SDK fell back to reCAPTCHA\(context.forSecondFactor)",
                                 fix: "call setAPNSToken(token, type: \(right)) in this build, or type: .unknown to let the SDK read aps-environment from embedded.mobileprovision")
            }
            return Diagnosis(.badDeviceToken, cause: "the push to \(short) was rejected by \(sentTo) with BadDeviceToken: \(detail ?? APNsReason.badDeviceToken.meaning)",
                             fix: "send the token the device registered, hex-encoded, to the environment it was issued in (a debug build's token to sandbox, a TestFlight or App Store build's to production)")
        case .invalidProviderToken:
            if let setup = context.provider, setup.keyID == setup.trustedTeamID, setup.teamID == setup.trustedKeyID {
                return Diagnosis(.keyAndTeamSwapped,
                                 cause: "every push was rejected with InvalidProviderToken: the backend's provider token has kid=\(setup.keyID) (the team ID) and iss=\(setup.teamID) (the key ID), swapped, so no silent push ever comes and every sign-in needs reCAPTCHA",
                                 fix: "configure the APNs auth key in Firebase (Project settings → Cloud Messaging) with Key ID \(setup.trustedKeyID) and Team ID \(setup.trustedTeamID)")
            }
            return Diagnosis(.invalidProviderToken, cause: "the push to \(short) was rejected with InvalidProviderToken: \(detail ?? APNsReason.invalidProviderToken.meaning)",
                             fix: "sign with the .p8 key whose Key ID is the token's kid, and put your Team ID in iss")
        case .expiredProviderToken:
            let offset = context.provider?.clockOffset ?? 0
            return Diagnosis(.expiredProviderToken,
                             cause: "the push to \(short) was rejected with ExpiredProviderToken: the provider token's iat is over an hour old\(offset < 0 ? ", because the backend's clock is \(-offset) s behind" : ""), so no silent push came and the SDK fell back to reCAPTCHA",
                             fix: "sync the backend's clock (NTP) and mint a new provider token at least every hour (not more than every 20 minutes)")
        default:
            return Diagnosis(.pushRejected, cause: "the push to \(short) was rejected by \(sentTo) with \(reason): \(detail ?? reason.meaning)",
                             fix: reason.fix)
        }
    }

    /// The backend's APNs client got no answer for the push to `token` (`error`: what it got).
    package static func unanswered(token: String, sentTo: APNsEnvironment, error: String) -> Diagnosis {
        Diagnosis(.pushUnanswered,
                  cause: "the silent push to \(token.prefix(4).uppercased())… got no answer from \(sentTo) (\(error)), so no secret came and the app, after waiting for it (suggestedTimeout), fell back to reCAPTCHA",
                  fix: "check that the backend reaches APNs (\(sentTo.appleHost):443 over HTTP/2 and TLS) and that its provider token is set up")
    }
}
