import APNsWire
import AuthBackend
import Causes
import DeviceOS
import FirebaseAuthCore
import Foundation
import IdentityToolkitAPI
import Scenarios

/// Reads a run's events (a timeline, or `--json` lines) and names what went wrong, first cause
/// first: the app's configuration, then the APNs channel, then the backend's refusals, then the
/// user. ``causes`` is the whole decision: a table read top to bottom, the first row whose rule
/// matches the run's facts names the cause.
package enum Explainer {
    package static func explain(_ events: [TimelineEvent]) -> Diagnosis {
        let run = RunFacts(events)
        for cause in causes {
            if let diagnosis = cause.decide(run) { return diagnosis }
        }
        return Diagnosis(.unknown, cause: "the events do not show a flow this explainer knows (\(events.count) events)", fix: "read the timeline")
    }

    /// One row of the table: the causes it can name, and the rule that names one of them from
    /// the run's facts (nil: the row does not apply).
    package struct Cause: Sendable {
        /// What the row is about, for `docs/` and the tests.
        package let about: String
        package let codes: [Diagnosis.Code]
        let decide: @Sendable (RunFacts) -> Diagnosis?

        init(_ about: String, _ codes: [Diagnosis.Code], _ decide: @escaping @Sendable (RunFacts) -> Diagnosis?) {
            self.about = about
            self.codes = codes
            self.decide = decide
        }
    }

    /// The causes in the order they are decided: the row order is the priority.
    package static let causes: [Cause] = [
        Cause("Google's front end refused the app's API key", [.apiKeyIOSAppBlocked, .apiKeyInvalid], apiKey),
        Cause("an admin disabled the user", [.userDisabled]) { run in
            run.errorCode == .userDisabled
                ? BackendRefusals.diagnose(endpoint: "signIn", error: .userDisabled, detail: nil, cause: nil, message: "USER_DISABLED") : nil
        },
        Cause("a blocking function refused", [.blockingFunction], blockingFunction),
        Cause("Sign in with Apple (no second factor in the run)", Apple.codes, Apple.diagnose),
        Cause("the reCAPTCHA callback scheme is not registered", [.schemeNotRegistered], schemeNotRegistered),
        Cause("the app delegate does not forward notifications", [.notificationsNotForwarded], notificationsNotForwarded),
        Cause("SMS defense needs the RecaptchaEnterprise SDK", [.recaptchaSDKNotLinked, .recaptchaActionMissing], recaptchaSDK),
        Cause("SMS defense in ENFORCE refused the token", [.smsDefenseTollFraud, .smsDefenseRefused], smsDefenseEnforced),
        Cause("the app refused the page's redirect, or never got it", [.redirectNotForwarded, .redirectRefused, .redirectToOtherApp], redirectRefused),
        Cause("APNs refused the push", PushRefusals.codes, pushRejected),
        Cause("APNs accepted the push, the device never got it", [.pushLost, .auditFallbackPushLost], pushLost),
        Cause("the push came after the SDK stopped waiting", [.pushTooSlow], pushTooSlow),
        Cause("the push reached the app, Auth did not take it", [.pushNotHandled], pushNotHandled),
        Cause("SMS defense in AUDIT fell back to the silent push", [.auditFallback], auditFallback),
        Cause("the backend refused a request", BackendRefusals.codes) { run in
            run.backendRefusal.map {
                BackendRefusals.diagnose(endpoint: $0.value.endpoint, error: $0.value.error, detail: $0.value.detail,
                                         cause: $0.value.cause, message: $0.event.message, testMode: run.testMode)
            }
        },
        Cause("the user closed the page", [.userCancelled]) { run in
            guard run.errorCode == .webContextCancelled else { return nil }
            if let provider = run.providerSignIn {
                return Diagnosis(.userCancelled, cause: "the user closed \(provider)'s sign-in page without signing in, so signIn(with:uiDelegate:) failed with webContextCancelled",
                                 fix: "nothing to fix: offer to try again")
            }
            return Diagnosis(.userCancelled, cause: "the user closed the reCAPTCHA page without solving it, so verifyPhoneNumber failed with webContextCancelled",
                             fix: "nothing to fix: offer to try again")
        },
        Cause("any other SDK error", [.authError]) { run in
            run.error.map {
                Diagnosis(.authError, cause: "the flow ended with SDK error \($0.code) \($0.name): \($0.message)", fix: "see the error's message")
            }
        },
        Cause("no silent push proved the app", [.apnsRegistrationFailed, .noAPNsToken, .simulator, .fallback], fallback),
        Cause("nothing went wrong", [.ok], succeeded),
        Cause("APNs accepted the push, nothing shows it delivered", [.pushNotDelivered]) { run in
            run.events.contains(.pushAccepted)
                ? Diagnosis(.pushNotDelivered, cause: "APNs accepted the push but nothing shows it reaching the app",
                            fix: "check that the device is online and the app installed for the push's topic") : nil
        },
    ]
}

/// The typed facts of a run that the causes read, each gathered once.
struct RunFacts: Sendable {
    let events: [TimelineEvent]
    let error: (code: Int, name: String, message: String)?
    let errorCode: AuthErrorCode?
    let testMode: Bool
    /// A second factor was part of the run (its first factor is Sign in with Apple, whose own
    /// diagnoses then give way to the second factor's).
    let multiFactor: Bool
    /// Said after a push's cause when the push guarded a second factor.
    let forSecondFactor: String
    let smsDefense: RecaptchaEnforcement?
    /// The first reCAPTCHA Enterprise assessment that did not pass.
    let assessment: (enforcement: RecaptchaEnforcement, verdict: RecaptchaAssessment.Verdict, score: Double?, detail: String)?
    let backendRefusal: (event: TimelineEvent, value: (endpoint: String, error: IdentityToolkitError.Code, detail: String?, cause: RejectionCause?))?
    let fallback: (event: TimelineEvent, value: (reason: String, code: ReCAPTCHAFallbackReason.Code?))?
    /// The provider whose web page the app signed in on (`OAuthProvider`), if it did.
    let providerSignIn: String?
    /// The page the run presented: "the reCAPTCHA page", or the provider's sign-in page.
    var page: String { providerSignIn.map { "\($0)'s sign-in page" } ?? "the reCAPTCHA page" }

    init(_ events: [TimelineEvent]) {
        self.events = events
        error = events.first { fact -> (code: Int, name: String, message: String)? in
            if case .authError(let code, let name, let message, _) = fact { (code, name, message) } else { nil }
        }?.value
        errorCode = error.flatMap { AuthErrorCode(rawValue: $0.code) }
        testMode = events.contains(.testMode)
        let secondFactorPurpose = events.first { fact -> VerificationPurpose? in
            if case .verifyPhoneNumber(_, let purpose) = fact, purpose != .firstFactor { purpose } else { nil }
        }?.value
        let multiFactorRefusals: Set<IdentityToolkitError.Code> = [
            .unsupportedFirstFactor, .invalidMFAPendingCredential, .missingMFAPendingCredential, .missingMFAEnrollmentID,
            .mfaEnrollmentNotFound, .secondFactorExists, .secondFactorLimitExceeded, .unverifiedEmail,
        ]
        multiFactor = secondFactorPurpose != nil || events.contains(.secondFactorRequired)
            || events.contains(backend: { event in
                switch event {
                case .secondFactorRequired, .secondFactorEnrolled, .secondFactorSignedIn: true
                default: event.refusal.map { multiFactorRefusals.contains($0.code) } ?? false
                }
            })
        forSecondFactor = secondFactorPurpose.map {
            $0 == .mfaEnrollment ? " (for the second factor being enrolled: the same app verification guards it)"
                : " (for the second factor's code: the same app verification guards it)"
        } ?? ""
        smsDefense = events.first(backend: { event -> RecaptchaEnforcement? in if case .recaptchaConfig(let state) = event { state } else { nil } })?.value
        assessment = events.first(backend: { event -> (enforcement: RecaptchaEnforcement, verdict: RecaptchaAssessment.Verdict, score: Double?, detail: String)? in
            if case .recaptchaAssessment(_, let enforcement, let assessment) = event, assessment.verdict != .passed {
                (enforcement, assessment.verdict, assessment.riskScore, assessment.detail)
            } else { nil }
        })?.value
        backendRefusal = events.first(backend: { $0.refusal.map { (endpoint: $0.endpoint, error: $0.code, detail: $0.detail, cause: $0.cause) } })
        fallback = events.first { fact -> (reason: String, code: ReCAPTCHAFallbackReason.Code?)? in
            if case .fallback(let reason, let code, _) = fact { (reason, code) } else { nil }
        }
        providerSignIn = events.first { fact -> String? in if case .providerSignIn(let provider) = fact { provider } else { nil } }?.value
    }

    /// AUDIT's fallback: the token did not pass, so the SDK verified the app the old way.
    var auditFallback: String? {
        assessment.map { "reCAPTCHA SMS defense (AUDIT) did not pass the app's reCAPTCHA Enterprise token (\($0.detail)), so the SDK fell back to the silent push" }
    }

    func delivered(handled: Bool) -> TimelineEvent? {
        events.first { fact -> Bool? in if case .pushDelivered(_, handled) = fact { true } else { nil } }?.event
    }
}

// The rules of the rows that take more than a line, in the table's order.
extension Explainer {
    static func apiKey(_ run: RunFacts) -> Diagnosis? {
        guard let refusal = run.events.first(backend: { event -> (endpoint: String, code: IdentityToolkitError.Code, detail: String?)? in
            guard let refusal = event.refusal, refusal.code == .apiKeyIOSAppBlocked || refusal.code == .apiKeyInvalid else { return nil }
            return (refusal.endpoint, refusal.code, refusal.detail)
        })?.value else { return nil }
        let reported = run.error.map { " FirebaseAuth 12.19 does not map it: the app sees \($0.code) \($0.name), the message only under NSUnderlyingError's FIRAuthErrorUserInfoDeserializedResponseKey" } ?? ""
        if refusal.code == .apiKeyIOSAppBlocked {
            return Diagnosis(.apiKeyIOSAppBlocked,
                             cause: "the API key is restricted to other iOS apps than this one: Google refused \(refusal.endpoint) with 403 \"\(refusal.detail ?? "")\" (the bundle ID is the app's X-Ios-Bundle-Identifier, Bundle.main's, not GoogleService-Info.plist's BUNDLE_ID).\(reported)",
                             fix: "add the app's bundle ID to the key's iOS-app restriction (Google Cloud console → APIs & Services → Credentials → the key in GoogleService-Info.plist → Application restrictions), or use the key made for this app")
        }
        return Diagnosis(.apiKeyInvalid,
                         cause: "the API key is not valid for the project: Google refused \(refusal.endpoint) with 400 \"\(refusal.detail ?? "")\".\(reported)",
                         fix: "download GoogleService-Info.plist again from the Firebase console and use its API_KEY")
    }

    static func blockingFunction(_ run: RunFacts) -> Diagnosis? {
        guard run.errorCode == .blockingCloudFunctionError else { return nil }
        return Diagnosis(.blockingFunction,
                         cause: "the project's blocking function (beforeCreate or beforeSignIn) refused the sign-in: the backend answered BLOCKING_FUNCTION_ERROR_RESPONSE, which the SDK reports as blockingCloudFunctionError (17105) with the function's own message as the description: \"\(run.error.map { AuthError.sdkDescription(.blockingCloudFunctionError, serverMessage: $0.message) } ?? "")\"",
                         fix: "read the function's logs (Firebase console → Functions); the HttpsError it throws is what the app shows, so make it say what the user can do")
    }

    static func schemeNotRegistered(_ run: RunFacts) -> Diagnosis? {
        guard run.errorCode == .appConfigurationError, let scheme = run.events.first({ fact -> String? in
            if case .callbackScheme(let scheme, registered: false) = fact { scheme } else { nil }
        })?.value else { return nil }
        return Diagnosis(.schemeNotRegistered,
                         cause: "the app's Info.plist does not register the URL scheme \(scheme), which \(run.providerSignIn == nil ? "the reCAPTCHA fallback returns" : "\(run.page) returns") to, so the SDK stops at once (fatalError on a device)",
                         fix: "add \(scheme) to CFBundleURLTypes → CFBundleURLSchemes in Info.plist (the encoded app ID from GOOGLE_APP_ID, or the REVERSED_CLIENT_ID if you use it)")
    }

    static func notificationsNotForwarded(_ run: RunFacts) -> Diagnosis? {
        guard run.errorCode == .notificationNotForwarded else { return nil }
        return Diagnosis(.notificationsNotForwarded,
                         cause: "the app delegate never passed the SDK's probe notification to Auth.canHandleNotification within 1 s, so verifyPhoneNumber fails with notificationNotForwarded",
                         fix: "with FirebaseAppDelegateProxyEnabled = NO, call Auth.auth().canHandleNotification(userInfo) first in application(_:didReceiveRemoteNotification:fetchCompletionHandler:) (and return if it is true)")
    }

    static func recaptchaSDK(_ run: RunFacts) -> Diagnosis? {
        switch run.errorCode {
        case .recaptchaSDKNotLinked:
            let state = run.smsDefense?.rawValue ?? "AUDIT or ENFORCE"
            return Diagnosis(.recaptchaSDKNotLinked,
                             cause: "the project's reCAPTCHA SMS defense is \(state) and the app does not link the RecaptchaEnterprise SDK, so verifyPhoneNumber failed with recaptchaSDKNotLinked (17208) before any code was sent\(run.smsDefense == .audit ? ": FirebaseAuth 12.19 throws it in AUDIT too, instead of falling back to the silent push" : "; nothing falls back to APNs")",
                             fix: "add the RecaptchaEnterprise package to the app (https://cloud.google.com/recaptcha-enterprise/docs/instrument-ios-apps), or set the phone provider's SMS defense to OFF until every app version links it")
        case .recaptchaActionCreationFailed:
            return Diagnosis(.recaptchaActionMissing, cause: "the app links a RecaptchaEnterprise SDK without RCAAction, so FirebaseAuth could not make an action and verifyPhoneNumber failed with 17210",
                             fix: "update the RecaptchaEnterprise package to a version with RCAAction (18.x)")
        default:
            return nil
        }
    }

    static func smsDefenseEnforced(_ run: RunFacts) -> Diagnosis? {
        guard let assessment = run.assessment, assessment.enforcement == .enforce else { return nil }
        if assessment.verdict == .tollFraud {
            return Diagnosis(.smsDefenseTollFraud,
                             cause: "reCAPTCHA SMS defense (ENFORCE) blocked the code: \(assessment.detail), so no SMS was sent and verifyPhoneNumber failed with \(run.error.map { "\($0.code) \($0.name)" } ?? "an error") (the SDK reports the server's refusal as internalError)",
                             fix: "for an attacker's number this is the protection working; for real users, raise the toll-fraud managed rule's threshold, or watch the scores in AUDIT first")
        }
        return Diagnosis(.smsDefenseRefused,
                         cause: "reCAPTCHA SMS defense (ENFORCE) refused the request's reCAPTCHA Enterprise token: \(assessment.detail); in ENFORCE nothing falls back to APNs",
                         fix: "make sure the app links RecaptchaEnterprise and can reach Google's reCAPTCHA service, and that the key in the project's reCAPTCHA config is for this bundle ID")
    }

    static func redirectRefused(_ run: RunFacts) -> Diagnosis? {
        if run.events.contains(where: { $0.fact == .redirect(handling: .otherApp, refusal: nil) }) {
            return Diagnosis(.redirectToOtherApp,
                             cause: "\(run.page)'s redirect went to another app that registers the same URL scheme (another build of this app, or a sample app of the same Firebase app), so Auth.canHandle(url) never saw it and the flow ended as a cancellation (17058)",
                             fix: "install one build at a time, or give each build its own Firebase app (its own GOOGLE_APP_ID, and so its own app-1-… scheme)")
        }
        guard let refused = run.events.first({ fact -> URLRefusal.Code?? in
            if case .redirect(.refused, let refusal) = fact { refusal } else { nil }
        }) else { return nil }
        if refused.value == .notForwarded {
            return Diagnosis(.redirectNotForwarded,
                             cause: "\(run.page)'s redirect reached the app but its delegate did not pass the URL to Auth.canHandle(url), so the page never closed and the flow ended as a cancellation (17058)",
                             fix: "with swizzling off, call Auth.auth().canHandle(url) in application(_:open:options:) (or scene(_:openURLContexts:) with scenes) and return if it is true")
        }
        return Diagnosis(.redirectRefused, cause: "\(run.page)'s redirect was refused by the app: \(refused.event.message)",
                         fix: "hand Auth exactly the URL the page redirected to, once, while its page is presented")
    }

    /// A refusal the receiver reports, or one the backend's client got (an injected fault).
    static func pushRejected(_ run: RunFacts) -> Diagnosis? {
        typealias Rejection = (token: String, environment: APNsEnvironment, reason: APNsReason, detail: String?)
        guard let rejection = run.events.first({ fact -> Rejection? in
            if case .pushRejected(let token, let environment, let reason, _, let detail) = fact { (token, environment, reason, detail) } else { nil }
        })?.value ?? run.events.first(backend: { event -> Rejection? in
            if case .verifyClient(let token, let environment, _, let push) = event, let status = push.status, status != 200 {
                (token.lowercased(), environment, push.reason ?? APNsReason(rawValue: "?"), nil)
            } else { nil }
        })?.value else { return nil }
        let device = run.events.first { fact -> (token: String, environment: APNsEnvironment)? in
            if case .deviceToken(let token, let environment, _, _) = fact { (token, environment) } else { nil }
        }?.value
        let declared = run.events.first { fact -> (declared: String, resolved: String, aps: String)? in
            if case .setAPNSToken(let declared, let resolved, let aps) = fact { (declared, resolved, aps) } else { nil }
        }?.value
        let setup = run.events.first { fact -> PushRefusals.ProviderSetup? in
            if case .providerSetup(let keyID, let teamID, let trustedKeyID, let trustedTeamID, let offset) = fact {
                PushRefusals.ProviderSetup(keyID: keyID, teamID: teamID, trustedKeyID: trustedKeyID, trustedTeamID: trustedTeamID, clockOffset: offset)
            } else { nil }
        }?.value
        let context = PushRefusals.Context(issuedIn: device?.token.lowercased() == rejection.token ? device?.environment : nil,
                                           declared: declared.map { ($0.declared, $0.resolved, $0.aps) }, provider: setup,
                                           forSecondFactor: run.forSecondFactor)
        return PushRefusals.diagnose(token: rejection.token, sentTo: rejection.environment, reason: rejection.reason, detail: rejection.detail,
                                     context: context)
    }

    static func pushLost(_ run: RunFacts) -> Diagnosis? {
        guard let lost = run.events.first({ fact -> String? in if case .pushLost(let token, _) = fact { token } else { nil } }) else { return nil }
        let auditFallback = run.auditFallback
        return Diagnosis(auditFallback == nil ? .pushLost : .auditFallbackPushLost,
                         cause: "\(auditFallback.map { "\($0); " } ?? "")APNs accepted the push to \(lost.value.prefix(4).uppercased())… but it never reached the device (offline), so after suggestedTimeout the SDK fell back to reCAPTCHA",
                         fix: "nothing to fix in the app: the fallback is the SDK's answer to a late push; check the device's network, Low Power Mode and Background App Refresh")
    }

    /// A push that Auth took, in a flow that still fell back, came after the SDK stopped waiting.
    static func pushTooSlow(_ run: RunFacts) -> Diagnosis? {
        guard run.fallback != nil, let late = run.delivered(handled: true), let accepted = run.events.first(where: { $0.kind == .pushAccepted })
        else { return nil }
        return Diagnosis(.pushTooSlow,
                         cause: "the silent push reached the device \(late.milliseconds - accepted.milliseconds) ms after APNs accepted it, after the SDK stopped waiting (suggestedTimeout), so it presented reCAPTCHA; the late push was still cached for the next verification",
                         fix: "nothing to fix in the app when APNs is slow; a backend that answers verifyClient with a longer suggestedTimeout gives pushes more time")
    }

    static func pushNotHandled(_ run: RunFacts) -> Diagnosis? {
        run.delivered(handled: false).map {
            Diagnosis(.pushNotHandled, cause: "the silent push reached the app delegate but Auth did not take it: \($0.message)",
                      fix: "pass remote notifications to Auth.auth().canHandleNotification(userInfo) before your own handling")
        }
    }

    /// AUDIT refused the token and the silent push proved the app instead.
    static func auditFallback(_ run: RunFacts) -> Diagnosis? {
        guard let auditFallback = run.auditFallback, run.events.contains(.signedIn) else { return nil }
        return Diagnosis(.auditFallback, cause: "\(auditFallback), which proved the app: the user signed in, through the pre-SMS-defense path",
                         fix: "in AUDIT this is the designed fallback; check why the token did not pass before moving to ENFORCE, where it would have blocked the code")
    }

    static func fallback(_ run: RunFacts) -> Diagnosis? {
        guard let fallback = run.fallback?.value else { return nil }
        if let failure = run.events.first({ fact -> String? in if case .apnsRegistrationFailed(let reason) = fact { reason } else { nil } }) {
            return Diagnosis(.apnsRegistrationFailed,
                             cause: "registerForRemoteNotifications() failed (\(failure.value)): the build has no Push Notifications entitlement, so there is no APNs token; the failure ended FirebaseAuth's wait for one at once and it used reCAPTCHA",
                             fix: "add the Push Notifications capability to the target (Signing & Capabilities) so the provisioning profile carries aps-environment, and rebuild")
        }
        switch fallback.code {
        case .noAPNsToken:
            return Diagnosis(.noAPNsToken,
                             cause: "no APNs token reached Auth within 5 s of FirebaseAuth asking the app to register for remote notifications, so it used reCAPTCHA",
                             fix: "check that the device can reach APNs and that the token reaches Auth (swizzling on, or Auth.auth().setAPNSToken(deviceToken, type:) in application(_:didRegisterForRemoteNotificationsWithDeviceToken:)); register at launch so the token is there before verifyPhoneNumber")
        case .simulator:
            return Diagnosis(.simulator, cause: "the app runs in a simulator, which gets no silent pushes, so the SDK went straight to reCAPTCHA (the user still signed in)",
                             fix: "test silent-push verification on a device; in simulators use test phone numbers with isAppVerificationDisabledForTesting")
        default:
            let why = fallback.reason.isEmpty ? "no app credential" : fallback.reason
            return Diagnosis(.fallback, cause: "no silent push proved the app (\(why)), so the SDK used reCAPTCHA", fix: "see the timeline for the push")
        }
    }

    static func succeeded(_ run: RunFacts) -> Diagnosis? {
        let events = run.events
        if events.contains(where: { if case .signedIn(_, .recaptchaEnterprise) = $0.fact { true } else { false } }) {
            return Diagnosis(.ok, cause: "nothing went wrong: reCAPTCHA SMS defense (\(run.smsDefense?.rawValue ?? "on")) passed the app's reCAPTCHA Enterprise token, so the code went out with no silent push and no page",
                             fix: "nothing to fix")
        }
        if events.contains(backend: { if case .secondFactorSignedIn = $0 { true } else { false } }) {
            return Diagnosis(.ok, cause: "nothing went wrong: the first factor (Sign in with Apple) asked for the second, the app proved itself for the second factor's code by silent push, and the user signed in with both",
                             fix: "nothing to fix")
        }
        if events.contains(backend: { if case .secondFactorEnrolled = $0 { true } else { false } }) {
            return Diagnosis(.ok, cause: "nothing went wrong: the app proved itself by silent push for the second factor's code, and the phone was enrolled as a second factor",
                             fix: "nothing to fix")
        }
        if events.contains(.signedIn), let provider = run.providerSignIn {
            return Diagnosis(.ok, cause: "nothing went wrong: the user signed in on \(provider)'s sign-in page, its redirect reached Auth.canHandle(url), and signInWithIdp took the page's answer",
                             fix: "nothing to fix")
        }
        if events.contains(.signedIn) {
            if run.testMode {
                return Diagnosis(.ok, cause: "nothing went wrong: app verification was disabled for testing, and the test number signed in with its fixed code (no push, no reCAPTCHA, no SMS)",
                                 fix: "nothing to fix (never ship with isAppVerificationDisabledForTesting)")
            }
            return Diagnosis(.ok, cause: "nothing went wrong: the silent push proved the app and the user signed in", fix: "nothing to fix")
        }
        // A push alone (the APNs-channel scenarios, no sign-in): it reached the app's delegate.
        if events.contains(.pushAccepted), events.contains(.pushDelivered) {
            return Diagnosis(.ok, cause: "nothing went wrong: APNs accepted the push and it reached the app's delegate", fix: "nothing to fix")
        }
        return nil
    }
}

/// Sign in with Apple's causes: read only when the run has an Apple credential and no second
/// factor (whose causes then come first).
enum Apple {
    static let codes: [Diagnosis.Code] = [.appleTokenReplayed, .appleNonceMissing, .appleNonceMismatch, .appleTokenExpired, .appleAudience,
                                          .appleIDAlreadyLinked, .appleUserMismatch, .appleError, .ok]

    static func diagnose(_ run: RunFacts) -> Diagnosis? {
        let events = run.events
        guard !run.multiFactor, let credential = events.first({ fact -> (rawNonce: String, tokenNonce: String)? in
            if case .appleCredential(let raw, _, let tokenNonce) = fact { (raw, tokenNonce) } else { nil }
        })?.value else { return nil }
        let backendCause = events.first(backend: { $0.refusal?.cause })?.value
        let sheet = events.first { fact -> (aud: String, ageSeconds: Int)? in
            if case .appleAuthorized(_, _, let aud, _, let age) = fact { (aud, age) } else { nil }
        }?.value
        switch run.errorCode {
        case .missingOrInvalidNonce:
            if events.contains(where: { $0.fact == .appleCredentialReplayed }) {
                return Diagnosis(.appleTokenReplayed,
                                 cause: "the app sent an Apple identity token Firebase had already used (Duplicate credential received): each token signs in once",
                                 fix: "start a new ASAuthorizationAppleIDRequest, with a new nonce, for every sign-in, reauthentication or link")
            }
            if credential.rawNonce.isEmpty {
                return Diagnosis(.appleNonceMissing, cause: "Apple's identity token carries a nonce but the app sent Firebase no raw nonce (Nonce is missing in the request)",
                                 fix: "pass the raw nonce whose SHA-256 you put in the Apple request: OAuthProvider.appleCredential(withIDToken:rawNonce:fullName:)")
            }
            return Diagnosis(.appleNonceMismatch,
                             cause: "the raw nonce the app sent Firebase (\(credential.rawNonce.prefix(12))…) does not hash to the nonce in Apple's identity token (\(credential.tokenNonce.prefix(12))…): it belongs to another request",
                             fix: "keep the raw nonce of the request in flight and pass exactly it; give Apple sha256(raw), Firebase raw")
        case .invalidCredential where (sheet?.ageSeconds ?? 0) > 600:
            return Diagnosis(.appleTokenExpired, cause: "Apple's identity token had expired (issued \(sheet?.ageSeconds ?? 0) s before it reached Firebase; they live 10 minutes)",
                             fix: "send the token to Firebase right after the sheet returns; ask Apple again rather than storing tokens")
        case .invalidCredential where sheet != nil && backendCause == .appleTokenAudience:
            return Diagnosis(.appleAudience, cause: "Apple's identity token is for \(sheet?.aud ?? ""), which Firebase's Apple provider does not accept (\(run.error?.message ?? ""))",
                             fix: "request the token with the app's bundle ID, or add the services ID in Firebase console → Authentication → Sign-in method → Apple")
        case .credentialAlreadyInUse:
            return Diagnosis(.appleIDAlreadyLinked, cause: "the Apple ID already has its own account, so it cannot be linked to this user (credentialAlreadyInUse)",
                             fix: "sign in with error.updatedCredential (AuthErrorUserInfoUpdatedCredentialKey) and merge the accounts in your app, or keep them apart")
        case .userMismatch:
            return Diagnosis(.appleUserMismatch, cause: "the Apple ID used to reauthenticate belongs to another user than the signed-in one (userMismatch)",
                             fix: "reauthenticate with the signed-in user's own Apple ID")
        default:
            if let error = run.error {
                return Diagnosis(.appleError, cause: "Sign in with Apple failed with \(error.code) \(error.name): \(error.message)", fix: "see the message")
            }
            return Diagnosis(.ok, cause: "nothing went wrong: Sign in with Apple worked (nonce, token, Firebase's verification)", fix: "nothing to fix")
        }
    }
}
