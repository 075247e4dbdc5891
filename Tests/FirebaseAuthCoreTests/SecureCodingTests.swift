import FirebaseAuthCore
import Foundation
import IdentityToolkitAPI
import Testing

/// The model classes an app may archive, as 12.19's archive them (`NSSecureCoding` with the SDK's
/// keys: UserMetadata.swift 34–50, MultiFactorInfo.swift 50–80, PhoneMultiFactorInfo.swift 47–63,
/// MultiFactor.swift 273–292, PhoneAuthCredential.swift 42–72), through `NSKeyedArchiver` with
/// secure coding required, as an app archives them.
@Suite struct SecureCodingTests {
    func roundTrip<T: NSObject & NSSecureCoding>(_ value: T, as type: T.Type, also: [AnyClass] = []) throws -> T? {
        let data = try NSKeyedArchiver.archivedData(withRootObject: value, requiringSecureCoding: true)
        return try NSKeyedUnarchiver.unarchivedObject(ofClasses: [type] + also, from: data) as? T
    }

    @Test("UserMetadata: both dates, or none")
    func metadata() throws {
        let made = Date(timeIntervalSince1970: 1_700_000_000), last = Date(timeIntervalSince1970: 1_700_000_500)
        let back = try #require(try roundTrip(UserMetadata(creationDate: made, lastSignInDate: last), as: UserMetadata.self))
        #expect(back.creationDate == made && back.lastSignInDate == last)
        let empty = try #require(try roundTrip(UserMetadata(creationDate: nil, lastSignInDate: nil), as: UserMetadata.self))
        #expect(empty.creationDate == nil && empty.lastSignInDate == nil)
        #expect(UserMetadata.supportsSecureCoding)
    }

    @Test("a phone second factor and the user's MultiFactor: the factors, with their numbers")
    func factors() throws {
        let info = try #require(PhoneMultiFactorInfo(enrollment: MFAEnrollment(mfaEnrollmentId: "enrollment-1", displayName: "Work",
                                                                                phoneInfo: "+16505550177", enrolledAt: "2023-11-14T22:13:20Z")))
        let back = try #require(try roundTrip(info, as: PhoneMultiFactorInfo.self))
        #expect(back.uid == "enrollment-1" && back.displayName == "Work" && back.phoneNumber == "+16505550177")
        #expect(back.factorID == PhoneMultiFactorInfo.PhoneMultiFactorID && back.enrollmentDate == info.enrollmentDate)

        let multiFactor = MultiFactor(factors: [info])
        let factors = try #require(try roundTrip(multiFactor, as: MultiFactor.self, also: [NSArray.self, MultiFactorInfo.self, PhoneMultiFactorInfo.self]))
        #expect(factors.enrolledFactors.map(\.uid) == ["enrollment-1"])
        #expect((factors.enrolledFactors.first as? PhoneMultiFactorInfo)?.phoneNumber == "+16505550177")
    }

    @Test("PhoneAuthCredential: the verification ID and code; an archive with neither pair is nil, as the SDK's")
    func phoneCredential() throws {
        let credential = PhoneAuthCredential(verificationID: "session-1", verificationCode: "123456")
        let back = try #require(try roundTrip(credential, as: PhoneAuthCredential.self))
        #expect(back.verificationID == "session-1" && back.verificationCode == "123456" && back.provider == "phone")

        let archiver = NSKeyedArchiver(requiringSecureCoding: true)
        archiver.encode("only-an-id", forKey: "verificationID")
        archiver.finishEncoding()
        let unarchiver = try NSKeyedUnarchiver(forReadingFrom: archiver.encodedData)
        #expect(PhoneAuthCredential(coder: unarchiver) == nil)
    }

    @Test("OAuthCredential: the tokens, nonce and name; unarchived, its provider is OAuthProvider.id, as the SDK's")
    func oauthCredential() throws {
        var name = PersonNameComponents()
        name.givenName = "Ada"
        name.familyName = "Lovelace"
        let credential = OAuthProvider.appleCredential(withIDToken: "header.payload.signature", rawNonce: "nonce-1", fullName: name)
        let back = try #require(try roundTrip(credential, as: OAuthCredential.self, also: [NSPersonNameComponents.self]))
        #expect(back.idToken == "header.payload.signature" && back.rawNonce == "nonce-1" && back.fullName?.givenName == "Ada")
        #expect(back.accessToken == nil && back.secret == nil)
        #expect(back.provider == OAuthProvider.id, "the SDK archives no provider")
    }
}
