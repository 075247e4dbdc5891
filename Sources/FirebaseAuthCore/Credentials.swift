import Foundation
import IdentityToolkitAPI

/// The providers the SDK names: FirebaseAuth 12.19's `AuthProviderID` (AuthProvider/AuthProviderID.swift),
/// a struct with a `rawValue` and one static member per provider, `custom(_:)` for the others.
public struct AuthProviderID: Equatable {
    public let rawValue: String
    private init(rawValue: String) { self.rawValue = rawValue }
}

extension AuthProviderID {
    public static var apple: Self { Self(rawValue: "apple.com") }
    public static var email: Self { Self(rawValue: "password") }
    public static var facebook: Self { Self(rawValue: "facebook.com") }
    public static var gameCenter: Self { Self(rawValue: "gc.apple.com") }
    public static var gitHub: Self { Self(rawValue: "github.com") }
    public static var google: Self { Self(rawValue: "google.com") }
    public static var phone: Self { Self(rawValue: "phone") }
    public static func custom(_ value: String) -> Self { Self(rawValue: value) }
}

/// What `signIn(with:)`, `reauthenticate(with:)` and `link(with:)` take: the SDK's
/// `AuthCredential`, with ``PhoneAuthCredential`` and ``OAuthCredential`` under it.
///
/// `@unchecked Sendable` because the compiler does not check a class that has subclasses: every
/// stored property here and in the subclasses is a `let` of a Sendable type, and the class is not
/// `open`, so no subclass outside this module can add mutable state.
public class AuthCredential: NSObject, @unchecked Sendable {
    /// The provider's ID: `phone`, `apple.com`.
    public let provider: String

    init(provider: String) { self.provider = provider }

    override public var description: String { "\(type(of: self))(\(provider))" }
}

/// The phone credential: the verification ID (the backend's session info) and the SMS code; or,
/// from a `credentialAlreadyInUse` error while linking a number another account holds, the
/// number and the backend's temporary proof (the SDK's two `credentialKind`s).
public final class PhoneAuthCredential: AuthCredential, NSSecureCoding, @unchecked Sendable {
    /// Not public in the SDK (its `credentialKind` is internal).
    package let verificationID: String
    package let verificationCode: String
    /// The temporary proof kind: the number…
    let phoneNumber: String?
    /// …and the proof that its owner verified it.
    let temporaryProof: String?

    package init(verificationID: String, verificationCode: String) {
        self.verificationID = verificationID
        self.verificationCode = verificationCode
        phoneNumber = nil
        temporaryProof = nil
        super.init(provider: AuthProviderID.phone.rawValue)
    }

    init(temporaryProof: String, phoneNumber: String) {
        verificationID = ""
        verificationCode = ""
        self.phoneNumber = phoneNumber
        self.temporaryProof = temporaryProof
        super.init(provider: AuthProviderID.phone.rawValue)
    }

    // MARK: NSSecureCoding: the verification ID and code, or the number and its proof, with the
    // SDK's keys (PhoneAuthCredential.swift 42–72)

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) {
        if let phoneNumber, let temporaryProof {
            coder.encode(phoneNumber, forKey: "phoneNumber")
            coder.encode(temporaryProof, forKey: "temporaryProof")
        } else {
            coder.encode(verificationID, forKey: "verificationID")
            coder.encode(verificationCode, forKey: "verificationCode")
        }
    }

    public required convenience init?(coder: NSCoder) {
        if let verificationID = coder.decodeIfPresent(of: NSString.self, forKey: "verificationID"),
           let verificationCode = coder.decodeIfPresent(of: NSString.self, forKey: "verificationCode") {
            self.init(verificationID: verificationID as String, verificationCode: verificationCode as String)
        } else if let temporaryProof = coder.decodeIfPresent(of: NSString.self, forKey: "temporaryProof"),
                  let phoneNumber = coder.decodeIfPresent(of: NSString.self, forKey: "phoneNumber") {
            self.init(temporaryProof: temporaryProof as String, phoneNumber: phoneNumber as String)
        } else {
            return nil
        }
    }
}

/// An identity provider's credential: Apple's identity token with the raw nonce (and, on the first
/// sign-in only, the user's name), or a pending token from an earlier `credentialAlreadyInUse`.
public final class OAuthCredential: AuthCredential, NSSecureCoding, @unchecked Sendable {
    /// Not public in the SDK (`provider` is).
    package let providerID: String
    public let idToken: String?
    /// Not public in the SDK.
    package let rawNonce: String?
    /// Never set by Sign in with Apple; here because the SDK's credential has it.
    public let accessToken: String?
    public let secret: String?
    /// Not public in the SDK.
    package let fullName: PersonNameComponents?
    let pendingToken: String?
    /// From `OAuthProvider`'s web flow: the provider's answer (the SDK's `OAuthResponseURLString`),
    /// sent as signInWithIdp's `requestUri`, and the raw session ID whose hash the page was given.
    let responseURL: String?
    let sessionID: String?

    init(providerID: String, idToken: String?, rawNonce: String?, accessToken: String? = nil, secret: String? = nil,
         fullName: PersonNameComponents?, pendingToken: String? = nil) {
        self.providerID = providerID
        self.idToken = idToken
        self.rawNonce = rawNonce
        self.accessToken = accessToken
        self.secret = secret
        self.fullName = fullName
        self.pendingToken = pendingToken
        responseURL = nil
        sessionID = nil
        super.init(provider: providerID)
    }

    /// The web flow's credential (the SDK's `init(withProviderID:sessionID:OAuthResponseURLString:)`).
    init(providerID: String, sessionID: String, responseURL: String) {
        self.providerID = providerID
        self.sessionID = sessionID
        self.responseURL = responseURL
        (idToken, rawNonce, accessToken, secret, fullName, pendingToken) = (nil, nil, nil, nil, nil, nil)
        super.init(provider: providerID)
    }

    /// The credential a `verifyAssertion` answer stands for (the SDK's
    /// `OAuthCredential(withVerifyAssertionResponse:)`, OAuthCredential.swift 72–83): its pending
    /// token signs in again; none (nil) when the answer carries no OAuth token, as in the SDK.
    convenience init?(response: VerifyAssertionResponse) {
        func given(_ text: String?) -> String? { text?.isEmpty == false ? text : nil }
        guard given(response.oauthIdToken) != nil || given(response.oauthAccessToken) != nil || given(response.oauthTokenSecret) != nil else {
            return nil
        }
        self.init(providerID: response.providerId?.rawValue ?? OAuthProvider.id, idToken: given(response.oauthIdToken), rawNonce: nil,
                  accessToken: given(response.oauthAccessToken), secret: given(response.oauthTokenSecret), fullName: nil,
                  pendingToken: response.pendingToken)
    }

    /// The `postBody` of signInWithIdp, as the SDK builds it (`VerifyAssertionRequest`, through
    /// `URLComponents.queryItems`, so with its percent-encoding): the provider, the identity token,
    /// the raw nonce, and on the first authorization the user's name as
    /// `user={"name":{"firstName":…,"lastName":…}}` (keys sorted).
    var postBody: String {
        var items = [URLQueryItem(name: "providerId", value: providerID)]
        if let idToken { items.append(URLQueryItem(name: "id_token", value: idToken)) }
        if let rawNonce { items.append(URLQueryItem(name: "nonce", value: rawNonce)) }
        if let accessToken { items.append(URLQueryItem(name: "access_token", value: accessToken)) }
        if let secret { items.append(URLQueryItem(name: "oauth_token_secret", value: secret)) }
        if let fullName, fullName.givenName != nil || fullName.familyName != nil {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            if let json = try? encoder.encode(["name": AppleName(firstName: fullName.givenName, lastName: fullName.familyName)]),
               let text = String(data: json, encoding: .utf8) {
                items.append(URLQueryItem(name: "user", value: text))
            }
        }
        var components = URLComponents()
        components.queryItems = items
        return components.query ?? ""
    }

    private struct AppleName: Encodable {
        let firstName: String?
        let lastName: String?
    }

    // MARK: NSSecureCoding, as the SDK's (OAuthCredential.swift, `encode(with:)` and
    // `init?(coder:)`): the tokens, the nonce and the name, with its keys. The provider is not
    // archived: an unarchived credential's is `OAuth` (`OAuthProvider.id`), as in the SDK.

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) {
        coder.encode(idToken, forKey: "IDToken")
        coder.encode(rawNonce, forKey: "rawNonce")
        coder.encode(accessToken, forKey: "accessToken")
        coder.encode(pendingToken, forKey: "pendingToken")
        coder.encode(secret, forKey: "secret")
        coder.encode(fullName.map { $0 as NSPersonNameComponents }, forKey: "fullName")
    }

    public required init?(coder: NSCoder) {
        idToken = coder.decodeIfPresent(of: NSString.self, forKey: "IDToken").map { $0 as String }
        rawNonce = coder.decodeIfPresent(of: NSString.self, forKey: "rawNonce").map { $0 as String }
        accessToken = coder.decodeIfPresent(of: NSString.self, forKey: "accessToken").map { $0 as String }
        pendingToken = coder.decodeIfPresent(of: NSString.self, forKey: "pendingToken").map { $0 as String }
        secret = coder.decodeIfPresent(of: NSString.self, forKey: "secret").map { $0 as String }
        fullName = coder.decodeIfPresent(of: NSPersonNameComponents.self, forKey: "fullName").map { $0 as PersonNameComponents }
        // Not archived, as in the SDK.
        (responseURL, sessionID) = (nil, nil)
        providerID = Self.archivedProvider
        super.init(provider: Self.archivedProvider)
    }

    /// `OAuthProvider.id`, what the SDK gives an unarchived credential.
    static let archivedProvider = OAuthProvider.id
}

extension PhoneAuthCredential {
    /// The `verifyPhoneNumber` request this credential makes for `operation` (`SIGN_UP_OR_IN`,
    /// `REAUTH`, `LINK`): the temporary proof and its number, or the verification ID and code
    /// (both required, as the SDK checks before any request).
    func verifyRequest(operation: PhoneSignInOperation, idToken: String? = nil) throws(AuthError) -> VerifyPhoneNumberRequest {
        var request = VerifyPhoneNumberRequest(sessionInfo: nil, code: nil, idToken: idToken, operation: operation)
        if let temporaryProof {
            request.temporaryProof = temporaryProof
            request.phoneNumber = phoneNumber
        } else {
            guard !verificationID.isEmpty else { throw AuthError(.missingVerificationID, "the verification ID is empty") }
            guard !verificationCode.isEmpty else { throw AuthError(.missingVerificationCode, "the verification code is empty") }
            request.sessionInfo = verificationID
            request.code = verificationCode
        }
        return request
    }

    /// The SDK's `phoneCredentialInUse`: any phone answer with a temporary proof means the number
    /// belongs to another account, whose credential goes back as the updated credential.
    static func inUse(_ response: VerifyPhoneNumberResponse) -> AuthError? {
        guard let proof = response.temporaryProof, !proof.isEmpty, let number = response.phoneNumber, !number.isEmpty else { return nil }
        return AuthError(.credentialAlreadyInUse,
                         "\(number) belongs to another account; sign in to it with userInfo[AuthErrorUserInfoUpdatedCredentialKey]",
                         updatedCredential: PhoneAuthCredential(temporaryProof: proof, phoneNumber: number))
    }
}
