import Foundation

/// What the provider said at sign-in: FirebaseAuth 12.19's `AdditionalUserInfo`
/// (User/AdditionalUserInfo.swift), an `NSObject` that archives itself (`NSSecureCoding`).
///
/// `profile` is the identity provider's answer (`rawUserInfo`, parsed): for Sign in with Apple,
/// the identity token's claims. `username` is nil, as on a device: the SDK reads a `username` that
/// Google's answer does not carry. Email, phone, anonymous and custom-token sign-ins have no
/// profile, as in the SDK. `@unchecked Sendable` (the SDK's is not `Sendable`): every property is
/// a `let`, and `profile` holds what JSON parsing makes (strings, numbers, arrays, dictionaries).
open class AdditionalUserInfo: NSObject, NSSecureCoding {
    /// The provider's ID (`apple.com`, `password`, `phone`; `""` for anonymous and custom-token sign-ins).
    public let providerID: String
    /// The identity provider's information about the user, if it gave any.
    public let profile: [String: Any]?
    /// The user's name at the provider (nil: see above).
    public let username: String?
    /// Whether this sign-in created the user.
    public let isNewUser: Bool

    /// `newUser()`: ``isNewUser`` (the SDK keeps it for Objective-C).
    open func newUser() -> Bool { isNewUser }

    init(providerID: String, profile: [String: Any]?, username: String?, isNewUser: Bool) {
        self.providerID = providerID
        self.profile = profile
        self.username = username
        self.isNewUser = isNewUser
    }

    /// The profile an identity provider's answer carries as `rawUserInfo` (a JSON object in a
    /// string, as Google and the Auth Emulator answer it); nil when absent or not an object, as
    /// the SDK's `VerifyAssertionResponse` reads it.
    static func profile(rawUserInfo: String?) -> [String: Any]? {
        guard let rawUserInfo, let object = try? JSONSerialization.jsonObject(with: Data(rawUserInfo.utf8)) else { return nil }
        return object as? [String: Any]
    }

    // MARK: Secure coding, under the SDK's keys

    public static let supportsSecureCoding = true

    private enum Key {
        static let providerID = "providerID", profile = "profile", username = "username", newUser = "newUser"
    }

    public required init?(coder: NSCoder) {
        guard let providerID = coder.decodeIfPresent(of: NSString.self, forKey: Key.providerID) else { return nil }
        self.providerID = providerID as String
        profile = coder.decodeIfPresent(of: [NSDictionary.self, NSArray.self, NSString.self, NSNumber.self], forKey: Key.profile) as? [String: Any]
        username = coder.decodeIfPresent(of: NSString.self, forKey: Key.username).map { $0 as String }
        isNewUser = coder.decodeIfPresent(of: NSNumber.self, forKey: Key.newUser)?.intValue == 1
    }

    public func encode(with coder: NSCoder) {
        coder.encode(providerID, forKey: Key.providerID)
        coder.encode(profile, forKey: Key.profile)
        coder.encode(username, forKey: Key.username)
        coder.encode(NSNumber(value: isNewUser ? 1 : 0), forKey: Key.newUser)
    }
}

extension NSCoder {
    /// `decodeObject(of:forKey:)` for a key the archive may not have: nil when it has none.
    /// swift-corelibs-foundation's keyed unarchiver fails the whole decoding on an absent key
    /// (raising, by default) where Apple's answers nil; archives the SDK writes leave keys out.
    package func decodeIfPresent<T: NSObject & NSCoding>(of type: T.Type, forKey key: String) -> T? {
        containsValue(forKey: key) ? decodeObject(of: type, forKey: key) : nil
    }

    /// ``decodeIfPresent(of:forKey:)-…`` for a value of one of several classes (a collection and its elements).
    package func decodeIfPresent(of classes: [AnyClass], forKey key: String) -> Any? {
        containsValue(forKey: key) ? decodeObject(of: classes, forKey: key) : nil
    }
}
