import AuthBackend
import Foundation
import IdentityToolkitAPI
@testable import Inspector
import Testing
import Utilities

/// The Users screen's rules as values (Sources/Inspector/Users.swift): its search, a user's trail
/// through the inspector's views, and an edit made into the Admin calls the Admin SDK would send
/// (firebase-admin-node src/auth/auth-api-request.ts: updateExistingAccount's deleteAttribute and
/// deleteProvider for null display name, photo URL and phone number).
@Suite("The Users screen's rules: search, a user's trail, edits as Admin calls")
struct UserScreenRulesTests {
    let ada = UserRecord(localId: "uid-ada", email: "Ada@Example.com", displayName: "Ada Lovelace", phoneNumber: "+16505550101",
                         mfaInfo: [MFAEnrollment(mfaEnrollmentId: "e1", displayName: "work", phoneInfo: "+16505550202", enrolledAt: nil)])
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("search: ID, email, phone and display name, any case, trimmed; no text finds everyone; other fields do not match")
    func search() {
        for text in ["uid-ada", "ADA@", "lovelace", "+1650555010", "  LOVE  ", "", nil] {
            #expect(UserSearch(text).matches(ada), "\(text ?? "nil")")
        }
        for text in ["grace", "+16505550202", "work"] { #expect(!UserSearch(text).matches(ada), "\(text)") }
    }

    func flow(_ id: Int, phone: String?, uid: String?, token: String?) -> InspectedFlow {
        InspectedFlow(id: id, signIn: "S\(id)", started: start, phoneNumber: phone, uid: uid, proof: nil, secondFactor: false, path: nil, outcome: .inProgress,
                      cause: nil, fix: nil, steps: [], deviceToken: token)
    }

    func push(_ id: Int, token: String) -> InspectedPush {
        InspectedPush(id: id, time: start, environment: .sandbox, apnsID: "A", deviceToken: token, topic: nil, pushType: nil, priority: nil,
                      expiration: nil, collapseID: nil, status: 200, reason: nil, detail: nil, injected: false, dropped: false, payload: "{}",
                      headers: [], providerToken: nil, cause: nil, fix: nil, device: nil, node: nil)
    }

    @Test("trail: sign-ins by ID or by either of their numbers; pushes to those sign-ins' tokens, any case; SMS to their numbers; emails to or for their address")
    func trail() {
        let flows = [flow(1, phone: "+16505550101", uid: nil, token: "ABCD"), flow(2, phone: nil, uid: "uid-ada", token: nil),
                     flow(3, phone: "+16505550202", uid: nil, token: nil), flow(4, phone: "+19995550000", uid: "someone", token: "EEEE")]
        let pushes = [push(10, token: "abcd"), push(11, token: "eeee"), push(12, token: "ffff")]
        let sms = [SMSMessage(phoneNumber: "+16505550101", code: "123456", sessionInfo: "s", languageCode: nil, text: "", sentAt: start),
                   SMSMessage(phoneNumber: "+16505550202", code: "654321", sessionInfo: "s", languageCode: nil, text: "", sentAt: start),
                   SMSMessage(phoneNumber: "+19995550000", code: "111111", sessionInfo: "s", languageCode: nil, text: "", sentAt: start)]
        let emails: [(email: OobEmail, used: Bool)] = [
            (OobEmail(email: "ada@example.com", code: "c1", requestType: .passwordReset, newEmail: nil, link: "l", sentAt: start), false),
            (OobEmail(email: "old@example.com", code: "c2", requestType: .verifyAndChangeEmail, newEmail: "ADA@example.com", link: "l", sentAt: start), true),
            (OobEmail(email: "grace@example.com", code: "c3", requestType: .passwordReset, newEmail: nil, link: "l", sentAt: start), false),
        ]
        let trail = UserTrail(of: ada, flows: flows, pushes: pushes, sms: sms, emails: emails)
        #expect(trail.flows.map(\.id) == [1, 2, 3])
        #expect(trail.pushes.map(\.id) == [10])
        #expect(trail.sms.map(\.code) == ["123456", "654321"])
        #expect(trail.emails.map(\.email.code) == ["c1", "c2"])
        let nobody = UserTrail(of: UserRecord(localId: "anon"), flows: flows, pushes: pushes, sms: sms, emails: emails)
        #expect(nobody.flows.isEmpty && nobody.pushes.isEmpty && nobody.sms.isEmpty && nobody.emails.isEmpty)
    }

    @Test("an edit: only the fields given; \"\" removes a name, photo or number; the claims as sorted JSON, checked; what cannot change is refused")
    func edit() throws {
        let change = UserEdit(phoneNumber: "", displayName: "", photoUrl: "https://example.com/a.png", disabled: true,
                              customClaims: ["tier": .number(2), "role": .string("admin")])
        let claims = try change.claimsJSON()
        #expect(claims == #"{"role":"admin","tier":2}"#)
        let request = try change.update(uid: "uid-ada", claims: claims)
        #expect(request.localId == "uid-ada" && request.deleteProvider == ["phone"] && request.deleteAttribute == [.displayName])
        #expect(request.photoUrl == "https://example.com/a.png" && request.disableUser == true && request.customAttributes == claims)
        #expect(request.email == nil && request.password == nil && request.phoneNumber == nil && request.emailVerified == nil)

        #expect(try UserEdit(customClaims: [:]).claimsJSON() == "{}")
        #expect(try UserEdit(email: "a@example.com").claimsJSON() == nil)
        #expect(throws: IdentityToolkitError.self) { try UserEdit(customClaims: ["sub": .string("x")]).claimsJSON() }
        #expect(throws: IdentityToolkitError.self) { try UserEdit(customClaims: ["x": .string(String(repeating: "y", count: 1000))]).claimsJSON() }

        for (bad, why) in [(UserEdit(), "nothing to change"), (UserEdit(localId: "other"), "cannot change"), (UserEdit(email: ""), "cannot be removed"),
                           (UserEdit(password: ""), "cannot be empty")] {
            #expect { try bad.update(uid: "uid-ada", claims: nil) } throws: { ($0 as? UserEdit.Refusal)?.message.contains(why) == true }
        }
        #expect(try UserEdit(localId: "uid-ada", disabled: false).update(uid: "uid-ada", claims: nil).disableUser == false)
    }

    @Test("a new user: the fields given, empty ones left out, as createUser sends them")
    func signUp() {
        let request = UserEdit(localId: "", email: "ada@example.com", password: "correct horse", phoneNumber: "", displayName: "Ada",
                               emailVerified: true).signUp()
        #expect(request.localId == nil && request.phoneNumber == nil && request.photoUrl == nil)
        #expect(request.email == "ada@example.com" && request.password == "correct horse" && request.displayName == "Ada" && request.emailVerified == true)
    }
}
