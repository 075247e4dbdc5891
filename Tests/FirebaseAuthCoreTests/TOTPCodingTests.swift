@testable import FirebaseAuthCore
import Foundation
import IdentityToolkitAPI
import Testing

/// A user's MultiFactor with a TOTP factor archives and comes back with it, each factor its own
/// class and `factorID` (the SDK's decoder lists `TOTPMultiFactorInfo` beside the phone factor's
/// class: MultiFactor.swift 283–284).
@Suite struct TOTPCodingTests {
    @Test("a MultiFactor with a phone and a TOTP factor archives and unarchives with both")
    func totpFactorArchived() throws {
        let factors = MultiFactorInfo.factors(from: [
            MFAEnrollment(mfaEnrollmentId: "phone-1", displayName: "Work", phoneInfo: "+16505550177", enrolledAt: "2023-11-14T22:13:20Z"),
            MFAEnrollment(mfaEnrollmentId: "totp-1", displayName: "App", enrolledAt: "2023-11-14T22:13:21Z", totpInfo: TOTPInfo()),
        ])
        #expect(factors.map(\.factorID) == ["phone", "totp"])
        let data = try NSKeyedArchiver.archivedData(withRootObject: MultiFactor(factors: factors), requiringSecureCoding: true)
        let back = try #require(try NSKeyedUnarchiver.unarchivedObject(
            ofClasses: [MultiFactor.self, NSArray.self, MultiFactorInfo.self, PhoneMultiFactorInfo.self, TOTPMultiFactorInfo.self], from: data) as? MultiFactor)
        #expect(back.enrolledFactors.map(\.uid) == ["phone-1", "totp-1"])
        #expect(back.enrolledFactors.map(\.factorID) == ["phone", "totp"])
    }
}
