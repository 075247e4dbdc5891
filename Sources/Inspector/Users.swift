import AuthBackend
import Foundation
import IdentityToolkitAPI
import Utilities

/// The Users screen's search, as the Emulator Suite's: text found, in any case, in a user's ID,
/// email, phone number or display name. No text finds everyone.
package struct UserSearch: Sendable, Hashable {
    package let text: String

    package init(_ text: String?) { self.text = (text ?? "").trimmingCharacters(in: .whitespaces).lowercased() }

    package func matches(_ user: UserRecord) -> Bool {
        guard !text.isEmpty else { return true }
        return [user.localId, user.email, user.phoneNumber, user.displayName].contains { $0?.lowercased().contains(text) == true }
    }
}

/// What happened to one user, as far as the inspector's views reach: their sign-ins (those naming
/// their ID or one of their phone numbers, first factor or second), the pushes those sign-ins'
/// silent pushes went to (by device token), the SMS to those numbers, the emails to their address
/// or to change it.
package struct UserTrail: Sendable {
    package var flows: [InspectedFlow]
    package var pushes: [InspectedPush]
    package var sms: [SMSMessage]
    package var emails: [(email: OobEmail, used: Bool)]

    package init(of user: UserRecord, flows: [InspectedFlow], pushes: [InspectedPush], sms: [SMSMessage], emails: [(email: OobEmail, used: Bool)]) {
        let phones = Set([user.phoneNumber].compactMap(\.self) + (user.mfaInfo ?? []).compactMap(\.phoneInfo))
        self.flows = flows.filter { flow in flow.uid == user.localId || flow.phoneNumber.map(phones.contains) == true }
        let tokens = Set(self.flows.compactMap { $0.deviceToken?.lowercased() })
        self.pushes = pushes.filter { tokens.contains($0.deviceToken.lowercased()) }
        self.sms = sms.filter { phones.contains($0.phoneNumber) }
        let address = user.email?.lowercased()
        self.emails = address == nil ? [] : emails.filter { $0.email.email.lowercased() == address || $0.email.newEmail?.lowercased() == address }
    }
}

/// A user to add, or the fields of one to change, as the Users screen and the API give them; made
/// into the Admin calls that do it (``signUp()``, ``update(uid:)``), as the Admin SDK's
/// `createUser` and `updateUser` make them.
package struct UserEdit: Sendable, Hashable {
    package var localId: String?
    package var email: String?
    package var password: String?
    package var phoneNumber: String?
    package var displayName: String?
    package var photoUrl: String?
    package var emailVerified: Bool?
    package var disabled: Bool?
    /// The custom claims; `[:]` removes them.
    package var customClaims: [String: JSONValue]?

    package init(localId: String? = nil, email: String? = nil, password: String? = nil, phoneNumber: String? = nil, displayName: String? = nil,
                photoUrl: String? = nil, emailVerified: Bool? = nil, disabled: Bool? = nil, customClaims: [String: JSONValue]? = nil) {
        self.localId = localId
        self.email = email
        self.password = password
        self.phoneNumber = phoneNumber
        self.displayName = displayName
        self.photoUrl = photoUrl
        self.emailVerified = emailVerified
        self.disabled = disabled
        self.customClaims = customClaims
    }

    /// A change the screen cannot make, said as the API's 400.
    package struct Refusal: Error, Sendable, Hashable {
        package let message: String
    }

    /// The claims as `customAttributes` carries them (JSON, keys sorted), checked as
    /// `setAccountInfo` checks them; `nil` when not given.
    package func claimsJSON() throws(IdentityToolkitError) -> String? {
        guard let customClaims else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let text = (try? encoder.encode(customClaims)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        try IdentityToolkit.checkCustomClaims(text)
        return text
    }

    /// The new user, as `createUser` sends it: a field left empty is not given.
    package func signUp() -> SignUpNewUserRequest {
        func given(_ text: String?) -> String? { text.flatMap { $0.isEmpty ? nil : $0 } }
        return SignUpNewUserRequest(localId: given(localId), email: given(email), password: given(password), displayName: given(displayName),
                                    photoUrl: given(photoUrl), phoneNumber: given(phoneNumber), emailVerified: emailVerified, disabled: disabled)
    }

    /// The change, as `updateUser` sends it: only the fields given; `""` removes a display
    /// name, photo URL or phone number (`deleteAttribute`, `deleteProvider`).
    package func update(uid: String, claims: String?) throws(Refusal) -> SetAccountInfoRequest {
        if localId != nil, localId != uid { throw Refusal(message: "a user's ID cannot change (localId \(localId ?? "") in the body of \(uid)'s change)") }
        if email == "" { throw Refusal(message: "an email cannot be removed, only changed") }
        if password == "" { throw Refusal(message: "a password cannot be empty (leave it out to keep the one they have)") }
        var request = SetAccountInfoRequest(localId: uid)
        var deleteAttribute: [UserAttributeName] = []
        request.email = email
        request.password = password
        switch displayName {
        case "": deleteAttribute.append(.displayName)
        case let name: request.displayName = name
        }
        switch photoUrl {
        case "": deleteAttribute.append(.photoURL)
        case let url: request.photoUrl = url
        }
        switch phoneNumber {
        case "": request.deleteProvider = [ProviderID.phone.rawValue]
        case let number: request.phoneNumber = number
        }
        request.deleteAttribute = deleteAttribute.isEmpty ? nil : deleteAttribute
        request.emailVerified = emailVerified
        request.disableUser = disabled
        request.customAttributes = claims
        guard request != SetAccountInfoRequest(localId: uid) else { throw Refusal(message: "nothing to change: give at least one field") }
        return request
    }
}
