import Foundation
import Utilities

/// A REST message whose body is checked against the API's schema before it is decoded, as the
/// Auth Emulator (and Google's front end) check it: a field the API does not have is 400
/// `Invalid JSON payload received. Unknown name "x": Cannot find field.`; a field the API has but
/// this backend does not implement (tenants, passwords, email links) is 400 `UNSUPPORTED_FIELD`
/// naming it, never silently ignored.
///
/// Field lists: the Identity Toolkit v1 discovery document as firebase-tools carries it
/// (`src/emulator/auth/apiSpec.ts`), held against Google's published document by
/// Tests/IdentityToolkitAPITests/DiscoveryContractTests.swift (equal but for the passkey fields
/// the emulator's spec has and the document's revision does not).
package protocol SchemaCheckedMessage: Decodable {
    /// Every field of the REST message.
    static var schemaFields: Set<String> { get }
    /// Fields of the schema this backend refuses, with why.
    static var unsupportedFields: [String: String] { get }
}

extension SchemaCheckedMessage {
    package static var unsupportedFields: [String: String] { [:] }

    /// Checks the top-level fields of a JSON object against the schema (`path` names where the
    /// object sits, for nested ones).
    package static func checkFields(of object: [String: JSONValue], at path: String? = nil,
                                   what: String) throws(IdentityToolkitError) {
        for name in object.keys.sorted() {
            guard schemaFields.contains(name) else { throw IdentityToolkitError.unknownField(name, at: path) }
            if let why = unsupportedFields[name], object[name] != .null {
                let field = path.map { "\($0).\(name)" } ?? name
                throw IdentityToolkitError(.unsupportedField, "\(field) (\(what)): \(why)")
            }
        }
    }
}

extension IdentityToolkitJSON {
    /// Decodes a body of a schema-checked message: a JSON object, its fields in the schema and
    /// implemented here, then the typed decode (wrong types answer which field).
    package static func decodeChecked<T: SchemaCheckedMessage>(_ type: T.Type, from bytes: some Collection<UInt8>,
                                                              what: String) throws(IdentityToolkitError) -> T {
        try T.checkFields(of: try object(from: bytes, what: what), what: what)
        return try decode(type, from: bytes)
    }

    /// A body as a JSON object, for its fields to be checked; anything else is the front end's
    /// INVALID_ARGUMENT (not JSON, or JSON but not an object).
    package static func object(from bytes: some Collection<UInt8>, what: String) throws(IdentityToolkitError) -> [String: JSONValue] {
        // One pass for a well-formed object; anything else gets Foundation's value or error below.
        if case .object(let object)? = JSONValue.parse(strict: bytes as? [UInt8] ?? Array(bytes)) { return object }
        do { return try JSONDecoder().decode([String: JSONValue].self, from: Data(bytes)) } catch {
            if (try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))) != nil {
                throw IdentityToolkitError(.invalidJSON, frontend: .init(
                    message: "Invalid JSON payload received. Expected an object for \(what).", reason: "invalid",
                    status: "INVALID_ARGUMENT", errorInfo: nil), status: 400)
            }
            throw IdentityToolkitError(.invalidJSON, frontend: .init(
                message: "Invalid JSON payload received. \(error)", reason: "parseError", status: "INVALID_ARGUMENT", errorInfo: nil),
                status: 400)
        }
    }
}

/// Refusals shared by the user-management messages.
enum Unsupported {
    static let passwords = "authsim backend keeps imported password hashes as given: it checks its own and the Auth Emulator's only"
    static let initialEmail = "an account's first email is not kept (the Auth Emulator keeps none either)"
    static let passwordCaptcha = "reCAPTCHA for email and password is not simulated (the project's EMAIL_PASSWORD_PROVIDER enforcement is OFF)"
    static let delegation = "authsim backend plays one project; target it by its own ID"
    static let captcha = "captcha fields belong to an app's own calls, not an admin's"
    static let passkeys = "authsim backend does not do passkeys"
    static let idpURIs = "an identity provider's sign-in URI is not simulated (as the Auth Emulator: \"Sign-in with IDP is not yet supported\"); createAuthUri answers an email's sign-in methods"
}

extension SignUpNewUserRequest: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = [
        "captchaChallenge", "captchaResponse", "clientType", "disabled", "displayName", "email", "emailVerified", "idToken", "instanceId",
        "localId", "mfaInfo", "password", "phoneNumber", "photoUrl", "recaptchaVersion", "targetProjectId", "tenantId",
    ]
    package static var unsupportedFields: [String: String] {
        ["targetProjectId": Unsupported.delegation,
         "captchaChallenge": Unsupported.captcha, "captchaResponse": Unsupported.captcha, "clientType": Unsupported.captcha,
         "recaptchaVersion": Unsupported.captcha, "idToken": "an admin create makes a new user; it links nothing",
         "instanceId": Unsupported.delegation, "mfaInfo": "enroll second factors with accounts:update's mfa.enrollments"]
    }
}

extension GetAccountInfoRequest: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = [
        "delegatedProjectNumber", "email", "federatedUserId", "idToken", "initialEmail", "localId", "phoneNumber", "targetProjectId", "tenantId",
    ]
    package static var unsupportedFields: [String: String] {
        ["delegatedProjectNumber": Unsupported.delegation, "targetProjectId": Unsupported.delegation,
         "initialEmail": Unsupported.initialEmail]
    }
}

extension SetAccountInfoRequest: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = [
        "captchaChallenge", "captchaResponse", "createdAt", "customAttributes", "delegatedProjectNumber", "deleteAttribute", "deleteProvider",
        "disableUser", "displayName", "email", "emailVerified", "idToken", "instanceId", "lastLoginAt", "linkProviderUserInfo", "localId",
        "mfa", "oobCode", "password", "phoneNumber", "photoUrl", "provider", "returnSecureToken", "targetProjectId", "tenantId",
        "upgradeToFederatedLogin", "validSince", "deletePasskey",
    ]
    package static var unsupportedFields: [String: String] {
        ["targetProjectId": Unsupported.delegation, "delegatedProjectNumber": Unsupported.delegation, "instanceId": Unsupported.delegation,
         "captchaChallenge": Unsupported.captcha, "captchaResponse": Unsupported.captcha, "provider": "not implemented (nor in the Auth Emulator)",
         "upgradeToFederatedLogin": "not implemented (nor in the Auth Emulator)", "deletePasskey": Unsupported.passkeys,
         "linkProviderUserInfo": "link providers by signing in with them (phone, Apple)"]
    }
}

extension DeleteAccountRequest: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = ["delegatedProjectNumber", "idToken", "localId", "targetProjectId", "tenantId"]
    package static var unsupportedFields: [String: String] {
        ["delegatedProjectNumber": Unsupported.delegation, "targetProjectId": Unsupported.delegation]
    }
}

extension BatchDeleteAccountsRequest: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = ["force", "localIds", "tenantId"]
}

extension UploadAccountRequest: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = [
        "allowOverwrite", "argon2Parameters", "blockSize", "cpuMemCost", "delegatedProjectNumber", "dkLen", "hashAlgorithm", "memoryCost",
        "parallelization", "passwordHashOrder", "rounds", "saltSeparator", "sanityCheck", "signerKey", "tenantId", "users",
    ]
    package static var unsupportedFields: [String: String] {
        var refused = ["delegatedProjectNumber": Unsupported.delegation]
        for name in ["argon2Parameters", "blockSize", "cpuMemCost", "dkLen", "hashAlgorithm", "memoryCost", "parallelization",
                     "passwordHashOrder", "rounds", "saltSeparator", "signerKey"] {
            refused[name] = "password hashes are kept as given, not checked: " + Unsupported.passwords
        }
        return refused
    }
}

extension UserRecord: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = [
        "createdAt", "customAttributes", "customAuth", "dateOfBirth", "disabled", "displayName", "email", "emailLinkSignin", "emailVerified",
        "initialEmail", "language", "lastLoginAt", "lastRefreshAt", "localId", "mfaInfo", "passwordHash", "passwordUpdatedAt", "phoneNumber",
        "photoUrl", "providerUserInfo", "rawPassword", "salt", "screenName", "tenantId", "timeZone", "validSince", "version", "passkeyInfo",
    ]
    package static var unsupportedFields: [String: String] {
        ["rawPassword": Unsupported.passwords, "passkeyInfo": Unsupported.passkeys]
    }
}

extension QueryUserInfoRequest: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = ["expression", "limit", "offset", "order", "returnUserInfo", "sortBy", "tenantId"]
}

extension VerifyCustomTokenRequest: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = ["delegatedProjectNumber", "instanceId", "returnSecureToken", "tenantId", "token"]
    package static var unsupportedFields: [String: String] {
        ["delegatedProjectNumber": Unsupported.delegation, "instanceId": Unsupported.delegation]
    }
}

/// An `int64` field of the REST API: strings on the wire (`"1700000000"`), as Google writes them,
/// but numbers are taken too, as Google's JSON parser takes them (the Python Admin SDK sends
/// `validSince` and an import's `createdAt` as numbers).
@propertyWrapper
package struct Int64Text: Codable, Sendable, Hashable {
    package var wrappedValue: String?
    package init(wrappedValue: String?) { self.wrappedValue = wrappedValue }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            wrappedValue = nil
        } else if let text = try? container.decode(String.self) {
            guard Int64(text) != nil else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "Expected an int64, as a number or a string of digits, not \"\(text)\"")
            }
            wrappedValue = text
        } else if let number = try? container.decode(Int64.self) {
            wrappedValue = String(number)
        } else {
            throw DecodingError.typeMismatch(Int64.self, .init(codingPath: decoder.codingPath, debugDescription: "Expected an int64 (TYPE_INT64)"))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

extension KeyedDecodingContainer {
    package func decode(_ type: Int64Text.Type, forKey key: Key) throws -> Int64Text {
        try decodeIfPresent(type, forKey: key) ?? Int64Text(wrappedValue: nil)
    }
}

extension KeyedEncodingContainer {
    package mutating func encode(_ value: Int64Text, forKey key: Key) throws {
        if let text = value.wrappedValue { try encode(text, forKey: key) }
    }
}

// The app's own calls (the SDK's requests): their fields as the discovery documents list them, so
// that a field Google does not know is refused as Google refuses it (DiscoveryContractTests holds
// each list to its schema). What of the schema this backend implements is the toolkit's to say.

extension VerifyClientRequest: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = ["appToken", "isSandbox"]
}

extension SendVerificationCodeRequest: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = [
        "autoRetrievalInfo", "captchaResponse", "clientType", "iosReceipt", "iosSecret", "phoneNumber", "playIntegrityToken", "recaptchaToken",
        "recaptchaVersion", "safetyNetToken", "tenantId",
    ]
}

extension VerifyPhoneNumberRequest: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = [
        "code", "idToken", "operation", "phoneNumber", "sessionInfo", "temporaryProof", "tenantId", "verificationProof",
    ]
}

extension VerifyAssertionRequest: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = [
        "autoCreate", "delegatedProjectNumber", "idToken", "pendingIdToken", "pendingToken", "postBody", "requestUri", "returnIdpCredential",
        "returnRefreshToken", "returnSecureToken", "sessionId", "tenantId",
    ]
}

extension RevokeTokenRequest: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = ["idToken", "providerId", "redirectUri", "tenantId", "token", "tokenType"]
}

extension StartMFAEnrollmentRequest: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = ["idToken", "phoneEnrollmentInfo", "tenantId", "totpEnrollmentInfo"]
}

extension FinalizeMFAEnrollmentRequest: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = ["displayName", "idToken", "phoneVerificationInfo", "tenantId", "totpVerificationInfo"]
}

extension WithdrawMFARequest: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = ["idToken", "mfaEnrollmentId", "tenantId"]
}

extension StartMFASignInRequest: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = ["mfaEnrollmentId", "mfaPendingCredential", "phoneSignInInfo", "tenantId"]
}

extension FinalizeMFASignInRequest: SchemaCheckedMessage {
    package static let schemaFields: Set<String> = ["mfaEnrollmentId", "mfaPendingCredential", "phoneVerificationInfo", "tenantId", "totpVerificationInfo"]
}

extension SchemaCheckedMessage {
    /// Only the names: a field the schema does not have is 400 `Unknown name`, as Google's front
    /// end answers before the service sees the call (the app's routes; what of the schema is
    /// implemented is the handler's to say).
    package static func checkKnownFields(of bytes: some Collection<UInt8>, what: String) throws(IdentityToolkitError) {
        for name in try IdentityToolkitJSON.object(from: bytes, what: what).keys.sorted() where !schemaFields.contains(name) {
            throw IdentityToolkitError.unknownField(name, at: nil)
        }
    }
}

extension IdentityToolkitJSON {
    /// Decodes an app's call whose field names are checked against its schema
    /// (``SchemaCheckedMessage/checkKnownFields(of:what:)``), parsing a well-formed body once: the
    /// names come from the same parse as the value (a sign-in decodes four such bodies). Anything
    /// else (a malformed body, a wrong type) is checked the slow way first, so an unknown field is
    /// named before a wrong type, as before.
    package static func decodeKnownFields<T: SchemaCheckedMessage>(_ type: T.Type, from bytes: some Collection<UInt8>,
                                                                  what: String) throws(IdentityToolkitError) -> T {
        let array = bytes as? [UInt8] ?? Array(bytes)
        if let (value, keys) = fastDecoder.decodeReportingKeys(type, from: array) {
            for key in keys where !T.schemaFields.contains(key) {
                // The slow check names the first unknown field in sorted order, as it always did.
                try T.checkKnownFields(of: array, what: what)
                throw IdentityToolkitError.unknownField(key, at: nil)
            }
            return value
        }
        try T.checkKnownFields(of: array, what: what)
        return try decode(type, from: array)
    }

    private static let fastDecoder = StrictJSONDecoder()
}
