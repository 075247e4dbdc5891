import APNsWire
import AuthBackend
import FirebaseAuthCore
import Foundation
import IdentityToolkitAPI
import LocalPKI
import Utilities

/// Phone second-factor flows of scenario files, through every part: the first factor is Sign in
/// with Apple (Firebase supports multi-factor with every provider but phone), the second factor's
/// code goes out behind the app's own verification (its silent push, or the reCAPTCHA fallback),
/// exactly as a first factor's does.
enum MultiFactorScenario {
    static func run(_ spec: ScenarioSpec, multiFactor: ScenarioSpec.MultiFactorSpec, world: PhoneAuthWorld, timeline: Timeline,
                    work: URL, credentials: LocalCredentials?, backendClock: AdjustableWallClock?) async -> ScenarioOutcome {
        let apple = spec.apple ?? ScenarioSpec.AppleSpec()
        let secondFactor = multiFactor.secondFactor ?? spec.user.phoneNumber
        do {
            let (auth, profile, _, _) = try await ScenarioRunner.prepareApp(spec, world: world, timeline: timeline, work: work,
                                                                          credentials: credentials, options: AppRunOptions())
            let provider = PhoneAuthProvider.provider(auth: auth)
            let presenter = RecordingPresenter(inner: HeadlessPresenter { ScenarioRunner.record($0, into: timeline) },
                                               auth: auth, timeline: timeline)
            func appleCredential() async throws -> OAuthCredential {
                try await AppleScenario.appleCredential(apple.appleUser, bundleID: spec.app.bundleID, hideEmail: apple.hideEmail,
                                                        world: world, timeline: timeline).0
            }
            /// What proved the app for the last code.
            func via() -> (AppVerification, SignInPath) { ScenarioRunner.via(auth) }
            func code(for number: String) async throws -> String {
                try await ScenarioRunner.typedCode(spec, number: number, world: world, timeline: timeline, backendClock: backendClock,
                                                   options: AppRunOptions(), testMode: profile.appVerificationDisabledForTesting)
            }
            /// The account signed in with Apple once, then given (behind the app's back, as if done
            /// earlier) a second factor and, for `phoneFirstFactor`, the phone number too.
            func setUp() async throws {
                guard let toolkit = world.toolkit else { throw AuthError(.internalError, "a multi-factor scenario needs the backend in this process") }
                let first = try await auth.signIn(with: appleCredential())
                timeline.record(.app, "signed in with Apple: uid \(first.user.uid.prefix(8))…", .signedIn(uid: first.user.uid, path: .apple))
                if multiFactor.flow == .phoneFirstFactor {
                    try await toolkit.setPhoneNumber(localId: first.user.uid, phoneNumber: spec.user.phoneNumber)
                    timeline.record(.authsim, "set-up: \(spec.user.phoneNumber) is linked to the account as its phone number")
                }
                try await toolkit.enrollSecondFactor(localId: first.user.uid, phoneNumber: secondFactor, displayName: multiFactor.displayName)
                timeline.record(.authsim, "set-up: the account enrolled \(secondFactor) (\"\(multiFactor.displayName)\") as its second factor earlier")
                try auth.signOut()
                timeline.record(.app, "Auth.auth().signOut()")
            }

            switch multiFactor.flow {
            case .enroll:
                let user = try await auth.signIn(with: appleCredential()).user
                timeline.record(.app, "signed in with Apple: uid \(user.uid.prefix(8))…, \(user.email ?? "no email")",
                                .signedIn(uid: user.uid, path: .apple))
                let session = try await user.multiFactor.session()
                timeline.record(.app, to: .backend,
                                "user.multiFactor.getSession → PhoneAuthProvider.provider().verifyPhoneNumber(\"\(secondFactor)\", uiDelegate: nil, multiFactorSession: session)",
                                .verifyPhoneNumber(number: secondFactor, purpose: .mfaEnrollment))
                let verificationID = try await provider.verifyPhoneNumber(secondFactor, uiDelegate: presenter, multiFactorSession: session)
                timeline.record(.app, "got verification ID \(verificationID.prefix(10))… for the second factor", .verificationID)
                let (proof, path) = via()
                let via = ScenarioOutcome.suffix(proof)
                let typed = try await code(for: secondFactor)
                timeline.record(.app, to: .backend,
                                "the user types \(typed); user.multiFactor.enroll(with: PhoneMultiFactorGenerator.assertion(with: credential), displayName: \"\(multiFactor.displayName)\")")
                try await user.multiFactor.enroll(with: PhoneMultiFactorGenerator.assertion(
                    with: provider.credential(withVerificationID: verificationID, verificationCode: typed)), displayName: multiFactor.displayName)
                let factors = user.multiFactor.enrolledFactors.compactMap { ($0 as? PhoneMultiFactorInfo)?.phoneNumber }
                timeline.record(.app, "enrolled\(via): user.multiFactor.enrolledFactors = \(factors)", .signedIn(uid: user.uid, path: path))
                return .enrolledSecondFactor(via: proof)

            case .signIn:
                try await setUp()
                do {
                    _ = try await auth.signIn(with: appleCredential())
                    throw AuthError(.internalError, "signed in with Apple alone although the account has a second factor")
                } catch let thrown where AuthError(thrown: thrown)?.code == .secondFactorRequired {
                    let error = AuthError(thrown: thrown)!
                    guard let resolver = error.resolver else { throw AuthError(.internalError, "secondFactorRequired without a resolver") }
                    let names = resolver.hints.map { "\($0.displayName ?? "?") \(($0 as? PhoneMultiFactorInfo)?.phoneNumber ?? "")" }
                    timeline.record(.app, "error 17078 secondFactorRequired: userInfo[AuthErrorUserInfoMultiFactorResolverKey] has \(resolver.hints.count) hint(s): \(names.joined(separator: ", "))",
                                    .secondFactorRequired(hints: resolver.hints.count))
                    if multiFactor.startAfterSeconds > 0 {
                        guard let backendClock else { throw AuthError(.internalError, "startAfterSeconds needs the backend in this process") }
                        backendClock.advance(by: multiFactor.startAfterSeconds)
                        timeline.record(.authsim, "the user leaves the second-factor prompt for \(Int(multiFactor.startAfterSeconds)) s (the backend's clock jumps ahead)")
                    }
                    guard let hint = resolver.hints.first as? PhoneMultiFactorInfo else {
                        throw AuthError(.internalError, "the resolver lists no phone factor")
                    }
                    timeline.record(.app, to: .backend,
                                    "PhoneAuthProvider.provider().verifyPhoneNumber(with: hint \(hint.phoneNumber), uiDelegate: nil, multiFactorSession: resolver.session)",
                                    .verifyPhoneNumber(number: hint.phoneNumber, purpose: .mfaSignIn))
                    let verificationID = try await provider.verifyPhoneNumber(with: hint, uiDelegate: presenter, multiFactorSession: resolver.session)
                    timeline.record(.app, "got verification ID \(verificationID.prefix(10))… for the second factor", .verificationID)
                    let (proof, path) = via()
                    let via = ScenarioOutcome.suffix(proof)
                    let typed = try await code(for: secondFactor)
                    timeline.record(.app, to: .backend,
                                    "the user types \(typed); resolver.resolveSignIn(with: PhoneMultiFactorGenerator.assertion(with: credential))")
                    let result = try await resolver.resolveSignIn(with: PhoneMultiFactorGenerator.assertion(
                        with: provider.credential(withVerificationID: verificationID, verificationCode: typed)))
                    timeline.record(.app, "signed in with a second factor\(via): uid \(result.user.uid.prefix(8))…",
                                    .signedIn(uid: result.user.uid, path: path))
                    return .signedInWithSecondFactor(via: proof)
                }

            case .phoneFirstFactor:
                try await setUp()
                let number = spec.user.phoneNumber
                timeline.record(.app, to: .backend,
                                "PhoneAuthProvider.provider().verifyPhoneNumber(\"\(number)\", uiDelegate: nil): the guide's phone sign-in, for an account with a second factor",
                                .verifyPhoneNumber(number: number, purpose: .firstFactor))
                let verificationID = try await provider.verifyPhoneNumber(number, uiDelegate: presenter)
                let typed = try await code(for: number)
                _ = try await auth.signIn(with: provider.credential(withVerificationID: verificationID, verificationCode: typed))
                return .signedIn(via: auth.lastAppVerification)
            }
        } catch {
            return ScenarioRunner.outcome(of: error, in: timeline)
        }
    }
}
