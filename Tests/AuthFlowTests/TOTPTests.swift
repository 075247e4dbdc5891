import AuthBackend
import FirebaseAuthCore
import Foundation
import IdentityToolkitAPI
import Scenarios
import TestSupport
import Testing
import Utilities

/// TOTP second factors through `import FirebaseAuth`'s calls, as FirebaseAuth 12.19 makes them
/// (MultiFactor/TOTP/TOTPMultiFactorGenerator.swift: `mfaEnrollment:start` with
/// `totpEnrollmentInfo`; MultiFactor.swift 114–130: `mfaEnrollment:finalize` with
/// `totpVerificationInfo`; MultiFactorResolver.swift 43–51: `mfaSignIn:finalize` with the code and
/// `mfaEnrollmentId`), against Google's rules for them (the Auth Emulator has no TOTP). The codes
/// come from pyotp, an authenticator library that reads the secret's `otpauth://` URL, at the
/// backend's clock: what an authenticator app would show.
@Suite("TOTP second factors: enroll with a code pyotp computes from the QR URL, sign in with a later one")
struct TOTPTests {
    /// The code pyotp computes from `url` at `instant`.
    func authenticatorCode(_ url: String, at instant: Date) async throws -> String {
        let run = try await runProgram(["python3", "-c", "import pyotp, sys; print(pyotp.parse_uri(sys.argv[1]).at(int(sys.argv[2])))",
                                        url, String(Int(instant.timeIntervalSince1970))])
        try #require(run.status == 0, "\(run.output)")
        return run.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("generateSecret, the QR URL read by pyotp, enroll; sign-in asks for it; the same code again is refused, the next step's signs in with sign_in_second_factor totp")
    func enrollAndSignIn() async throws {
        guard await toolAvailable(["python3", "-c", "import pyotp"]) else { return }
        let clock = ManualWallClock(Date(timeIntervalSince1970: 1_800_000_000))
        try await withWorld(backendClock: clock) { world, _ in
            let toolkit = try #require(world.toolkit)
            _ = try await toolkit.adminCreateUser(SignUpNewUserRequest(email: "ada@example.com", password: "secret1", emailVerified: true))
            let (auth, _) = try await world.install(AppProfile(), wallClock: clock)
            let user = try await auth.signIn(withEmail: "ada@example.com", password: "secret1").user

            let secret = try await TOTPMultiFactorGenerator.generateSecret(with: try await user.multiFactor.session())
            let url = secret.generateQRCodeURL(withAccountName: "ada@example.com", issuer: "Authsim")
            #expect(url.hasPrefix("otpauth://totp/Authsim:ada@example.com?secret=\(secret.sharedSecretKey())&issuer=Authsim&algorithm=SHA1&digits=6"))
            _ = await expectAuthError(.invalidVerificationCode) {
                try await user.multiFactor.enroll(with: TOTPMultiFactorGenerator.assertionForEnrollment(with: secret, oneTimePassword: "000000"),
                                                  displayName: "app")
            }
            let code = try await authenticatorCode(url, at: clock.now)
            try await user.multiFactor.enroll(with: TOTPMultiFactorGenerator.assertionForEnrollment(with: secret, oneTimePassword: code),
                                              displayName: "authenticator")
            let enrolled = try #require(auth.currentUser?.multiFactor.enrolledFactors.first)
            #expect(enrolled.factorID == PhoneMultiFactorInfo.TOTPMultiFactorID && enrolled.displayName == "authenticator")
            #expect(try await auth.currentUser?.getIDTokenResult().signInSecondFactor == "totp")

            try auth.signOut()
            let required = await expectAuthError(.secondFactorRequired) { try await auth.signIn(withEmail: "ada@example.com", password: "secret1") }
            let resolver = try #require(required?.resolver)
            let hint = try #require(resolver.hints.first)
            // A sign-in's session has no user to make a secret for: internalError "Invalid ID token.", as the SDK answers.
            _ = await expectAuthError(.internalError) { try await TOTPMultiFactorGenerator.generateSecret(with: resolver.session) }
            #expect(hint.factorID == "totp" && hint.uid == enrolled.uid)
            // The enrollment's code was spent: a code signs in once.
            _ = await expectAuthError(.invalidVerificationCode) {
                try await resolver.resolveSignIn(with: TOTPMultiFactorGenerator.assertionForSignIn(withEnrollmentID: hint.uid, oneTimePassword: code))
            }
            clock.advance(by: 30)
            let next = try await authenticatorCode(url, at: clock.now)
            let result = try await resolver.resolveSignIn(with: TOTPMultiFactorGenerator.assertionForSignIn(withEnrollmentID: hint.uid, oneTimePassword: next))
            #expect(result.user.uid == user.uid && auth.currentUser === result.user)
            #expect(try await result.user.getIDTokenResult().signInSecondFactor == "totp")
        }
    }

}
