import APNsWire
import Scenarios
import Foundation

/// A run's root cause in one sentence, and the fix.
public struct Diagnosis: Sendable, Hashable {
    /// A stable code (`tokenTypeMismatch`, `keyAndTeamSwapped`, …).
    public let code: String
    public let cause: String
    public let fix: String

    public init(_ code: String, cause: String, fix: String) {
        self.code = code
        self.cause = cause
        self.fix = fix
    }
}

/// Reads a run's events (a timeline, or `--json` lines) and names what went wrong, first cause
/// first: the app's configuration, then the APNs channel, then the backend's refusals, then the
/// user.
public enum Explainer {
    public static func explain(_ events: [TimelineEvent]) -> Diagnosis {
        func first(_ kind: EventKind, where condition: (TimelineEvent) -> Bool = { _ in true }) -> TimelineEvent? {
            events.first { $0.kind == kind.rawValue && condition($0) }
        }
        let error = first(.authError)
        let errorCode = error.flatMap { Int($0.facts["code"] ?? "") }
        let device = first(.deviceToken)
        let declared = first(.setAPNSToken)

        // Sign in with Apple.
        if let credential = first(.appleCredential) {
            let sheet = first(.appleAuthorized)
            if errorCode == 17094 {
                if let replay = events.first(where: { $0.facts["replay"] == "true" }), replay.milliseconds >= 0 {
                    return Diagnosis("appleTokenReplayed",
                                     cause: "the app sent an Apple identity token Firebase had already used (Duplicate credential received): each token signs in once",
                                     fix: "start a new ASAuthorizationAppleIDRequest, with a new nonce, for every sign-in, reauthentication or link")
                }
                if credential.facts["rawNonce"]?.isEmpty != false {
                    return Diagnosis("appleNonceMissing", cause: "Apple's identity token carries a nonce but the app sent Firebase no raw nonce (Nonce is missing in the request)",
                                     fix: "pass the raw nonce whose SHA-256 you put in the Apple request: OAuthProvider.appleCredential(withIDToken:rawNonce:fullName:)")
                }
                return Diagnosis("appleNonceMismatch",
                                 cause: "the raw nonce the app sent Firebase (\(credential.facts["rawNonce"]?.prefix(12) ?? "")…) does not hash to the nonce in Apple's identity token (\(credential.facts["tokenNonce"]?.prefix(12) ?? "")…): it belongs to another request",
                                 fix: "keep the raw nonce of the request in flight and pass exactly it; give Apple sha256(raw), Firebase raw")
            }
            if errorCode == 17004, let age = sheet?.facts["ageSeconds"].flatMap(Int.init), Double(age) > 600 {
                return Diagnosis("appleTokenExpired", cause: "Apple's identity token had expired (issued \(age) s before it reached Firebase; they live 10 minutes)",
                                 fix: "send the token to Firebase right after the sheet returns; ask Apple again rather than storing tokens")
            }
            if errorCode == 17004, let aud = sheet?.facts["aud"], let message = error?.facts["message"], message.contains("aud") {
                return Diagnosis("appleAudience", cause: "Apple's identity token is for \(aud), which Firebase's Apple provider does not accept (\(message))",
                                 fix: "request the token with the app's bundle ID, or add the services ID in Firebase console → Authentication → Sign-in method → Apple")
            }
            if errorCode == 17025 {
                return Diagnosis("appleIDAlreadyLinked", cause: "the Apple ID already has its own account, so it cannot be linked to this user (credentialAlreadyInUse)",
                                 fix: "sign in with error.updatedCredential (AuthErrorUserInfoUpdatedCredentialKey) and merge the accounts in your app, or keep them apart")
            }
            if errorCode == 17024 {
                return Diagnosis("appleUserMismatch", cause: "the Apple ID used to reauthenticate belongs to another user than the signed-in one (userMismatch)",
                                 fix: "reauthenticate with the signed-in user's own Apple ID")
            }
            if let error, let code = errorCode {
                return Diagnosis("appleError", cause: "Sign in with Apple failed with \(code) \(error.facts["name"] ?? ""): \(error.facts["message"] ?? "")", fix: "see the message")
            }
            return Diagnosis("ok", cause: "nothing went wrong: Sign in with Apple worked (nonce, token, Firebase's verification)", fix: "nothing to fix")
        }

        // The app's configuration: it stops before anything is sent.
        if errorCode == 17998, let message = error?.facts["message"], let range = message.range(of: "custom URL scheme ") {
            let scheme = message[range.upperBound...].prefix { !$0.isWhitespace }
            return Diagnosis("schemeNotRegistered",
                             cause: "the app's Info.plist does not register the URL scheme \(scheme), which the reCAPTCHA fallback returns to, so the SDK stops at once (fatalError on a device)",
                             fix: "add \(scheme) to CFBundleURLTypes → CFBundleURLSchemes in Info.plist (the encoded app ID from GOOGLE_APP_ID, or the REVERSED_CLIENT_ID if you use it)")
        }
        if errorCode == 17054 {
            return Diagnosis("notificationsNotForwarded",
                             cause: "the app delegate never passed the SDK's probe notification to Auth.canHandleNotification within 1 s, so verifyPhoneNumber fails with notificationNotForwarded",
                             fix: "with FirebaseAppDelegateProxyEnabled = NO, call Auth.auth().canHandleNotification(userInfo) first in application(_:didReceiveRemoteNotification:fetchCompletionHandler:) (and return if it is true)")
        }
        if let refused = first(.redirect, where: { $0.facts["handled"] == "false" }) {
            if refused.message.contains("notForwarded") || refused.facts["refusal"] == "notForwarded" {
                return Diagnosis("redirectNotForwarded",
                                 cause: "the reCAPTCHA page's redirect reached the app but its delegate did not pass the URL to Auth.canHandle(url), so the page never closed and the flow ended as a cancellation (17058)",
                                 fix: "with swizzling off, call Auth.auth().canHandle(url) in application(_:open:options:) (or scene(_:openURLContexts:) with scenes) and return if it is true")
            }
            return Diagnosis("redirectRefused", cause: "the reCAPTCHA redirect was refused by the app: \(refused.message)",
                             fix: "hand Auth exactly the URL the page redirected to, once, while its page is presented")
        }

        // The APNs channel: a refusal the receiver reports, or one the backend's client got (an injected fault).
        if let rejected = first(.pushRejected) ?? first(.pushAnswer, where: { ($0.facts["status"] ?? "200") != "200" && $0.facts["status"] != "" }) {
            let token = rejected.facts["token"] ?? ""
            let short = token.prefix(4).uppercased() + "…"
            let sentTo = rejected.facts["environment"] ?? "?"
            let reason = rejected.facts["reason"] ?? "?"
            switch reason {
            case APNsReason.badDeviceToken.rawValue:
                let issued = device?.facts["token"]?.lowercased() == token ? device?.facts["environment"] : nil
                let profile = declared?.facts["apsEnvironment"].flatMap { $0 == "none" ? nil : $0 }
                let type = declared?.facts["declaredType"] ?? "?"
                let resolved = declared?.facts["resolvedType"] ?? type
                let typeText = type == "unknown" ? ".unknown (resolved to .\(resolved))" : ".\(type)"
                if let issued, issued != sentTo {
                    let origin = issued == "sandbox" ? "a debug build" : "a TestFlight / App Store build"
                    let right = issued == "sandbox" ? ".sandbox" : ".prod"
                    return Diagnosis("tokenTypeMismatch",
                                     cause: "the push to \(short) was rejected by \(sentTo) with BadDeviceToken: the token was issued in \(issued) (\(origin)\(profile.map { ", provisioning profile aps-environment=\($0)" } ?? "")) but the app declared type \(typeText), so no silent push came and the SDK fell back to reCAPTCHA",
                                     fix: "call setAPNSToken(token, type: \(right)) in this build, or type: .unknown to let the SDK read aps-environment from embedded.mobileprovision")
                }
                return Diagnosis("badDeviceToken", cause: "the push to \(short) was rejected by \(sentTo) with BadDeviceToken: \(rejected.facts["detail"] ?? APNsReason.badDeviceToken.meaning)",
                                 fix: "send the token the device registered, hex-encoded, to the environment it was issued in")
            case APNsReason.invalidProviderToken.rawValue:
                let setup = events.first { $0.facts["keyID"] != nil }
                if let setup, setup.facts["keyID"] == setup.facts["trustedTeamID"], setup.facts["teamID"] == setup.facts["trustedKeyID"] {
                    return Diagnosis("keyAndTeamSwapped",
                                     cause: "every push was rejected with InvalidProviderToken: the backend's provider token has kid=\(setup.facts["keyID"] ?? "?") (the team ID) and iss=\(setup.facts["teamID"] ?? "?") (the key ID), swapped, so no silent push ever comes and every sign-in needs reCAPTCHA",
                                     fix: "configure the APNs auth key in Firebase (Project settings → Cloud Messaging) with Key ID \(setup.facts["trustedKeyID"] ?? "?") and Team ID \(setup.facts["trustedTeamID"] ?? "?")")
                }
                return Diagnosis("invalidProviderToken", cause: "the push to \(short) was rejected with InvalidProviderToken: \(rejected.facts["detail"] ?? APNsReason.invalidProviderToken.meaning)",
                                 fix: "sign with the .p8 key whose Key ID is the token's kid, and put your Team ID in iss")
            case APNsReason.expiredProviderToken.rawValue:
                let offset = events.compactMap { $0.facts["providerClockOffset"] }.first.flatMap(Int.init) ?? 0
                return Diagnosis("expiredProviderToken",
                                 cause: "the push to \(short) was rejected with ExpiredProviderToken: the provider token's iat is over an hour old\(offset < 0 ? ", because the backend's clock is \(-offset) s behind" : ""), so no silent push came and the SDK fell back to reCAPTCHA",
                                 fix: "sync the backend's clock (NTP) and mint a new provider token at least every hour (not more than every 20 minutes)")
            default:
                return Diagnosis("pushRejected", cause: "the push to \(short) was rejected by \(sentTo) with \(reason): \(rejected.facts["detail"] ?? APNsReason(rawValue: reason).meaning)",
                                 fix: "fix the request as the reason says: \(APNsReason(rawValue: reason).meaning)")
            }
        }
        if let lost = first(.pushLost) {
            return Diagnosis("pushLost",
                             cause: "APNs accepted the push to \((lost.facts["token"] ?? "").prefix(4).uppercased())… but it never reached the device (offline), so after suggestedTimeout the SDK fell back to reCAPTCHA",
                             fix: "nothing to fix in the app: the fallback is the SDK's answer to a late push; check the device's network, Low Power Mode and Background App Refresh")
        }
        // A push that Auth took, in a flow that still fell back, came after the SDK stopped waiting.
        if first(.fallback) != nil, let late = first(.pushDelivered, where: { $0.facts["handled"] == "true" }),
           let accepted = first(.pushAccepted) {
            return Diagnosis("pushTooSlow",
                             cause: "the silent push reached the device \(late.milliseconds - accepted.milliseconds) ms after APNs accepted it, after the SDK stopped waiting (suggestedTimeout), so it presented reCAPTCHA; the late push was still cached for the next verification",
                             fix: "nothing to fix in the app when APNs is slow; a backend that answers verifyClient with a longer suggestedTimeout gives pushes more time")
        }
        if let delivered = first(.pushDelivered, where: { $0.facts["handled"] == "false" }) {
            return Diagnosis("pushNotHandled", cause: "the silent push reached the app delegate but Auth did not take it: \(delivered.message)",
                             fix: "pass remote notifications to Auth.auth().canHandleNotification(userInfo) before your own handling")
        }

        // The backend's refusals.
        if let refused = first(.backendRejected) {
            let detail = refused.facts["detail"].flatMap { $0.isEmpty ? nil : $0 }
            switch refused.facts["error"] {
            case "INVALID_CODE":
                return Diagnosis("wrongCode", cause: "the user typed a code that is not the one texted, so signIn failed with invalidVerificationCode",
                                 fix: "let the user retry (5 wrong codes end the session) or resend the code")
            case "SESSION_EXPIRED":
                return Diagnosis("sessionExpired", cause: "the code had expired when the user typed it, so signIn failed with sessionExpired",
                                 fix: "call verifyPhoneNumber again for a new code (codes are valid for a few minutes)")
            case "OPERATION_NOT_ALLOWED":
                return Diagnosis("regionBlocked", cause: "the project's SMS region policy does not allow this number's region\(detail.map { " (\($0))" } ?? ""), so no code was sent",
                                 fix: "allow the region in Firebase console → Authentication → Settings → SMS region policy")
            case "QUOTA_EXCEEDED":
                return Diagnosis("quotaExceeded", cause: "the project's SMS quota is used up\(detail.map { " (\($0))" } ?? ""), so no code was sent",
                                 fix: "raise the quota (Authentication → Settings → SMS quota) or use test phone numbers for testing")
            case "MISSING_APP_CREDENTIAL" where events.contains(where: { $0.facts["testMode"] == "true" }):
                return Diagnosis("realNumberInTestMode",
                                 cause: "app verification is disabled for testing but the number is not one of the project's test numbers, so the backend refused to text it (no app credential, no reCAPTCHA token)",
                                 fix: "use a fictional test number (Authentication → Sign-in method → Phone → test numbers) with isAppVerificationDisabledForTesting, or turn it off for real numbers")
            default:
                return Diagnosis("backendRefused", cause: "\(refused.facts["endpoint"] ?? "the backend") refused: \(refused.message)",
                                 fix: "see the error: \(refused.facts["error"] ?? "")")
            }
        }

        // The user, or nothing wrong.
        if errorCode == 17058 {
            return Diagnosis("userCancelled", cause: "the user closed the reCAPTCHA page without solving it, so verifyPhoneNumber failed with webContextCancelled",
                             fix: "nothing to fix: offer to try again")
        }
        if let error, let code = errorCode {
            return Diagnosis("authError", cause: "the flow ended with SDK error \(code) \(error.facts["name"] ?? ""): \(error.facts["message"] ?? error.message)",
                             fix: "see the error's message")
        }
        if let fallback = first(.fallback) {
            let why = fallback.facts["reason"] ?? "no app credential"
            if why.contains("simulator") {
                return Diagnosis("simulator", cause: "the app runs in a simulator, which gets no silent pushes, so the SDK went straight to reCAPTCHA (the user still signed in)",
                                 fix: "test silent-push verification on a device; in simulators use test phone numbers with isAppVerificationDisabledForTesting")
            }
            return Diagnosis("fallback", cause: "no silent push proved the app (\(why)), so the SDK used reCAPTCHA", fix: "see the timeline for the push")
        }
        if first(.signedIn) != nil {
            if events.contains(where: { $0.facts["testMode"] == "true" }) {
                return Diagnosis("ok", cause: "nothing went wrong: app verification was disabled for testing, and the test number signed in with its fixed code (no push, no reCAPTCHA, no SMS)",
                                 fix: "nothing to fix (never ship with isAppVerificationDisabledForTesting)")
            }
            return Diagnosis("ok", cause: "nothing went wrong: the silent push proved the app and the user signed in", fix: "nothing to fix")
        }
        return Diagnosis("unknown", cause: "the events do not show a flow this explainer knows (\(events.count) events)", fix: "read the timeline")
    }
}
