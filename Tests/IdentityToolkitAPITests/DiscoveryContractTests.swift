import Foundation
import IdentityToolkitAPI
import Testing
import TestSupport
import Utilities

/// Google's published discovery documents for Identity Toolkit, as google-api-python-client ships
/// them (`googleapiclient/discovery_cache/documents/identitytoolkit.v1.json`, `.v2.json`; `.ci/run`
/// installs the pinned version). The SDK still calls the v3 `relyingparty/…` paths, which are the
/// legacy names of the v1 RPCs (`verifyPhoneNumber` is `accounts:signInWithPhoneNumber`), so the
/// messages are held against the current v1 and v2 schemas.
enum DiscoveryDocuments {
    /// The package's documents folder, found once through the Python that has it (nil: not
    /// installed, and the tests are skipped with a note, or fail on CI).
    static let folder = Task<URL?, Never> {
        if let given = ProcessInfo.processInfo.environment["AUTHSIM_DISCOVERY_DOCUMENTS"] { return URL(fileURLWithPath: given) }
        guard await toolAvailable(["python3", "-c", "import googleapiclient.discovery_cache"]) else { return nil }
        guard let found = try? await runProgram(["python3", "-c", "import googleapiclient.discovery_cache as c, os; print(os.path.join(os.path.dirname(c.__file__), 'documents'))"]),
              found.status == 0 else { return nil }
        return URL(fileURLWithPath: found.output.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The schemas of `identitytoolkit.<version>.json`, or nil when the package is not here. Each
    /// document is read and parsed once for all the tests (parsing one is a few hundred
    /// milliseconds of CPU: fifty parses at once would starve the suite's other tests).
    static func schemas(_ version: String) async throws -> [String: JSONValue]? {
        guard let parsed = await (version == "v1" ? v1 : v2).value else { return nil }
        return try parsed.get()
    }

    private static let v1 = Task { await parse("v1") }
    private static let v2 = Task { await parse("v2") }

    private static func parse(_ version: String) async -> Result<[String: JSONValue], ContractError>? {
        guard let folder = await folder.value else { return nil }
        do {
            let data = try Data(contentsOf: folder.appendingPathComponent("identitytoolkit.\(version).json"))
            guard case .object(let document) = try JSONDecoder().decode(JSONValue.self, from: data),
                  case .object(let schemas) = document["schemas"] else { return .failure(ContractError("identitytoolkit.\(version).json has no schemas")) }
            return .success(schemas)
        } catch {
            return .failure(ContractError("identitytoolkit.\(version).json: \(error)"))
        }
    }
}

struct ContractError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One schema of a discovery document: its properties, their JSON types, and a sample message
/// with every property set (nested messages too, two levels down).
struct DiscoverySchema {
    let name: String
    let all: [String: JSONValue]

    var properties: [String: JSONValue] {
        guard case .object(let schema) = all[name], case .object(let properties) = schema["properties"] else { return [:] }
        return properties
    }

    func schema(_ ref: String) -> DiscoverySchema { DiscoverySchema(name: ref, all: all) }

    /// A message with every field, each of the type the document gives it.
    func sample(depth: Int = 0) -> JSONValue {
        var object: [String: JSONValue] = [:]
        for (field, property) in properties { object[field] = sample(of: property, depth: depth) }
        return .object(object)
    }

    private func sample(of property: JSONValue, depth: Int) -> JSONValue {
        guard case .object(let property) = property else { return .null }
        if case .string(let ref) = property["$ref"] { return depth < 3 ? schema(ref).sample(depth: depth + 1) : .object([:]) }
        guard case .string(let type) = property["type"] else { return .null }
        switch type {
        case "string":
            if case .array(let values) = property["enum"] {
                let named = values.compactMap { if case .string(let value) = $0, !value.hasSuffix("UNSPECIFIED") { value } else { nil } }
                return .string(named.first ?? "")
            }
            switch property["format"] {
            case .string("int64"), .string("uint64"): return .string("1700000000")
            case .string("google-datetime"): return .string("2026-11-25T12:00:00Z")
            case .string("byte"): return .string("YWJj")
            default: return .string("s")
            }
        case "integer": return .number(3)
        case "number": return .number(0.5)
        case "boolean": return .bool(true)
        case "array":
            guard let items = property["items"] else { return .array([]) }
            return .array([sample(of: items, depth: depth)])
        case "object":
            if let values = property["additionalProperties"] { return .object(["k": sample(of: values, depth: depth)]) }
            return .object([:])
        case "any": return .string("s")
        default: return .null
        }
    }
}

/// Which of our Codable messages is which schema. Every message of IdentityToolkitAPI that travels
/// to or from Identity Toolkit has a row; those that do not are in ``notInTheDocuments`` with why.
enum ContractTable {
    struct Row: Sendable {
        let type: any Decodable.Type
        let version: String
        let schema: String
        /// Our fields the document does not have, each with why it is kept.
        var ours: [String: String] = [:]
    }

    static func v1(_ type: any Decodable.Type, _ name: String, ours: [String: String] = [:]) -> Row {
        Row(type: type, version: "v1", schema: "GoogleCloudIdentitytoolkitV1\(name)", ours: ours)
    }
    static func v2(_ type: any Decodable.Type, _ name: String, ours: [String: String] = [:]) -> Row {
        Row(type: type, version: "v2", schema: "GoogleCloudIdentitytoolkitV2\(name)", ours: ours)
    }
    /// Identity Platform's project administration (tenants), in the v2 document.
    static func adminV2(_ type: any Decodable.Type, _ name: String, ours: [String: String] = [:]) -> Row {
        Row(type: type, version: "v2", schema: "GoogleCloudIdentitytoolkitAdminV2\(name)", ours: ours)
    }

    static let rows: [Row] = [
        // What the iOS SDK sends and reads (its v3 paths are the v1 RPCs' old names).
        v1(VerifyClientRequest.self, "VerifyIosClientRequest"),
        v1(VerifyClientResponse.self, "VerifyIosClientResponse"),
        v1(SendVerificationCodeRequest.self, "SendVerificationCodeRequest"),
        v1(SendVerificationCodeResponse.self, "SendVerificationCodeResponse"),
        v1(VerifyPhoneNumberRequest.self, "SignInWithPhoneNumberRequest"),
        v1(VerifyPhoneNumberResponse.self, "SignInWithPhoneNumberResponse"),
        v1(GetProjectConfigResponse.self, "GetProjectConfigResponse"),
        v1(VerifyAssertionRequest.self, "SignInWithIdpRequest"),
        v1(VerifyAssertionResponse.self, "SignInWithIdpResponse"),
        v1(GetAccountInfoRequest.self, "GetAccountInfoRequest"),
        v1(GetAccountInfoRequest.FederatedUserID.self, "FederatedUserIdentifier"),
        v1(GetAccountInfoResponse.self, "GetAccountInfoResponse"),
        v1(UserRecord.self, "UserInfo"),
        v1(ProviderUserInfo.self, "ProviderUserInfo"),
        v1(MFAEnrollment.self, "MfaEnrollment"),
        v1(SetAccountInfoRequest.self, "SetAccountInfoRequest"),
        v1(SetAccountInfoRequest.MFAUpdate.self, "MfaInfo"),
        v1(SetAccountInfoResponse.self, "SetAccountInfoResponse"),
        v1(DeleteAccountRequest.self, "DeleteAccountRequest"),
        v1(DeleteAccountResponse.self, "DeleteAccountResponse"),
        v1(VerifyCustomTokenRequest.self, "SignInWithCustomTokenRequest"),
        v1(VerifyCustomTokenResponse.self, "SignInWithCustomTokenResponse"),
        v1(SignUpNewUserRequest.self, "SignUpRequest",
           ours: ["returnSecureToken": "FirebaseAuth 12.19 sends it (SignUpNewUserRequest.swift 42, 112) and the service takes it; the document dropped the deprecated field"]),
        v1(SignUpNewUserResponse.self, "SignUpResponse"),
        v1(VerifyPasswordRequest.self, "SignInWithPasswordRequest"),
        v1(VerifyPasswordResponse.self, "SignInWithPasswordResponse"),
        v1(GetOOBConfirmationCodeRequest.self, "GetOobCodeRequest"),
        v1(GetOOBConfirmationCodeResponse.self, "GetOobCodeResponse"),
        v1(ResetPasswordRequest.self, "ResetPasswordRequest"),
        v1(ResetPasswordResponse.self, "ResetPasswordResponse"),
        v1(CreateAuthURIRequest.self, "CreateAuthUriRequest"),
        v1(CreateAuthURIResponse.self, "CreateAuthUriResponse"),
        v1(EmailLinkSignInRequest.self, "SignInWithEmailLinkRequest"),
        v1(EmailLinkSignInResponse.self, "SignInWithEmailLinkResponse"),
        v2(GetRecaptchaConfigResponse.self, "RecaptchaConfig"),
        v2(GetRecaptchaConfigResponse.EnforcementState.self, "RecaptchaEnforcementState"),
        v2(RevokeTokenRequest.self, "RevokeTokenRequest"),
        v2(StartMFAEnrollmentRequest.self, "StartMfaEnrollmentRequest"),
        v2(StartMFAEnrollmentResponse.self, "StartMfaEnrollmentResponse"),
        v2(StartMFAPhoneRequestInfo.self, "StartMfaPhoneRequestInfo"),
        v2(StartMFAPhoneResponseInfo.self, "StartMfaPhoneResponseInfo"),
        v2(FinalizeMFAEnrollmentRequest.self, "FinalizeMfaEnrollmentRequest"),
        v2(FinalizeMFAEnrollmentResponse.self, "FinalizeMfaEnrollmentResponse"),
        v2(FinalizeMFAPhoneRequestInfo.self, "FinalizeMfaPhoneRequestInfo"),
        v2(FinalizeMFAPhoneResponseInfo.self, "FinalizeMfaPhoneResponseInfo"),
        v2(WithdrawMFARequest.self, "WithdrawMfaRequest"),
        v2(WithdrawMFAResponse.self, "WithdrawMfaResponse"),
        v2(StartMFASignInRequest.self, "StartMfaSignInRequest"),
        v2(StartMFASignInResponse.self, "StartMfaSignInResponse"),
        v2(FinalizeMFASignInRequest.self, "FinalizeMfaSignInRequest"),
        v2(FinalizeMFASignInResponse.self, "FinalizeMfaSignInResponse"),
        v2(StartMFATOTPResponseInfo.self, "StartMfaTotpEnrollmentResponseInfo"),
        v2(MFATOTPVerificationInfo.self, "FinalizeMfaTotpEnrollmentRequestInfo"),
        v2(MFATOTPSignInInfo.self, "MfaTotpSignInRequestInfo"),
        // What the Admin SDKs send and read.
        v1(DownloadAccountResponse.self, "DownloadAccountResponse"),
        v1(UploadAccountRequest.self, "UploadAccountRequest"),
        v1(UploadAccountResponse.self, "UploadAccountResponse"),
        v1(UploadAccountResponse.Failure.self, "ErrorInfo"),
        v1(BatchDeleteAccountsRequest.self, "BatchDeleteAccountsRequest"),
        v1(BatchDeleteAccountsResponse.self, "BatchDeleteAccountsResponse"),
        v1(BatchDeleteAccountsResponse.Failure.self, "BatchDeleteErrorInfo"),
        v1(QueryUserInfoRequest.self, "QueryUserInfoRequest"),
        v1(QueryUserInfoRequest.Expression.self, "SqlExpression"),
        v1(QueryUserInfoResponse.self, "QueryUserInfoResponse"),
        adminV2(TenantConfig.self, "Tenant",
                ours: ["tenantId": "the Auth Emulator answers it beside name (firebase-tools state.ts createTenantWithTenantId); Google's document has name alone"]),
        adminV2(MultiFactorAuthConfig.self, "MultiFactorAuthConfig"),
        adminV2(ListTenantsResponse.self, "ListTenantsResponse"),
    ]

    /// Messages of IdentityToolkitAPI that no Identity Toolkit document describes.
    static let notInTheDocuments: [String: String] = [
        "SecureTokenRequest": "Secure Token API (securetoken.googleapis.com), not Identity Toolkit",
        "SecureTokenResponse": "Secure Token API",
        "GetProjectConfigRequest": "a GET with query parameters (the SDK sends no body)",
        "GetRecaptchaConfigRequest": "a GET with query parameters",
        "DownloadAccountRequest": "a GET with query parameters (accounts:batchGet)",
        "TOTPInfo": "`{}`: the documents' TotpInfo and StartMfaTotpEnrollmentRequestInfo have no fields",
        "CreateTenantRequest, UpdateTenantRequest": "a Tenant as the body (held by its row), the tenant and update mask from the path and query",
        "GetTenantRequest, DeleteTenantRequest, ListTenantsRequest": "a path (and a query) with no body",
        "MultiFactorAuthConfig.State, MultiFactorAuthConfig.Provider": "the schema's enums (held by its row)",
        "EmptyResponse": "`{}`",
        "VerificationCode, VerificationCodesResponse, EmulatorProjectConfig, OobCode, OobCodesResponse": "the Auth Emulator's own API (firebase-tools), not Google's",
        "FirebaseAuthPush": "the silent push's APNs payload",
        "FirebaseWebError": "the reCAPTCHA page's redirect",
        "ProjectRecaptchaConfig": "what authsim's backend is configured with",
        "RecaptchaEnterpriseExecuteRequest, RecaptchaEnterpriseExecuteResponse": "the RecaptchaEnterprise SDK's service, not Identity Toolkit",
        "RecaptchaEnterpriseFetchClientRequest, RecaptchaEnterpriseFetchClientResponse": "the RecaptchaEnterprise SDK's service, not Identity Toolkit",
        "JSONWebKey, JSONWebKeySet, JWTHeader, FirebaseIDTokenClaims": "JOSE (RFC 7515, 7517) and the ID token's claims",
        "RecaptchaEnforcement": "the values of RecaptchaEnforcementState.enforcementState: held by the enum test below",
        "AppVerification": "how a code request proved the app, as app, backend and timeline name it: no field of its own (the request's iosReceipt, recaptchaToken or captchaResponse says it)",
        "OobRequestType": "the values of GetOobCodeRequest.requestType (a string field), the ones this backend sends",
        "RecaptchaAction": "the SDK's names for its reCAPTCHA Enterprise tokens (AuthRecaptchaAction), not an Identity Toolkit field",
        "Int64Text": "how an int64 field travels (a JSON string, or a number on input): a field's type, not a message",
        "IdentityToolkitError": "the service's error codes; their envelope is ErrorResponse",
        "ErrorResponse": "Google's error envelope (google.rpc.Status as JSON), not in the discovery documents",
    ]
}

/// The fields a decoded message holds (its stored properties, through optionals, arrays and
/// nested messages): a field still nil after decoding a sample with every field of the schema
/// is one the schema does not have.
enum Fields {
    /// Paths of the properties that are nil, as `a.b`.
    static func unset(in value: Any, path: String = "", depth: Int = 0) -> [String] {
        guard depth < 4 else { return [] }
        var found: [String] = []
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .struct else { return [] }
        for child in mirror.children {
            guard var label = child.label else { continue }
            if label.hasPrefix("_") { label.removeFirst() }  // a property wrapper's storage
            let field = path.isEmpty ? label : "\(path).\(label)"
            let inner = Mirror(reflecting: child.value)
            if inner.displayStyle == .optional {
                guard let some = inner.children.first?.value else {
                    found.append(field)
                    continue
                }
                found += unset(in: some, path: field, depth: depth + 1)
            } else if inner.displayStyle == .collection, let first = inner.children.first?.value {
                found += unset(in: first, path: field, depth: depth + 1)
            } else if let text = child.value as? Int64Text, text.wrappedValue == nil {
                found.append(field)
            } else {
                found += unset(in: child.value, path: field, depth: depth + 1)
            }
        }
        return found
    }
}

/// What differs between a message and its schema, in sentences naming the field.
func contractProblems(_ type: any Decodable.Type, schema: DiscoverySchema, ours: [String: String] = [:]) throws -> [String] {
    let sample = try JSONEncoder().encode(schema.sample())
    let decoded: Any
    do {
        decoded = try JSONDecoder().decode(type, from: sample)
    } catch let DecodingError.typeMismatch(expected, context) {
        return ["\(type).\(context.codingPath.map(\.stringValue).joined(separator: ".")) is \(expected) here, not what \(schema.name) says (\(context.debugDescription))"]
    } catch let DecodingError.keyNotFound(key, context) {
        return ["\(type) requires \((context.codingPath + [key]).map(\.stringValue).joined(separator: ".")), which \(schema.name) does not have"]
    } catch {
        return ["\(type) does not decode \(schema.name)'s sample: \(error)"]
    }
    return Fields.unset(in: decoded).filter { ours[$0] == nil }.map { "\(type).\($0) is not in \(schema.name)" }
}

@Suite("Identity Toolkit messages held against Google's discovery documents")
struct DiscoveryContractTests {
    /// Each message decodes a sample of its schema with every field (a field whose type differs
    /// from the document's fails here, naming the field), and none of its own fields stays unset
    /// (a field whose name the document does not have).
    @Test("every message's fields have the names and types of Google's published schema", arguments: ContractTable.rows.map(\.schema))
    func message(_ schemaName: String) async throws {
        let row = try #require(ContractTable.rows.first { $0.schema == schemaName })
        guard let all = try await DiscoveryDocuments.schemas(row.version) else { return }
        let schema = DiscoverySchema(name: row.schema, all: all)
        try #require(!schema.properties.isEmpty, "identitytoolkit.\(row.version).json has no schema \(row.schema)")
        let problems = try contractProblems(row.type, schema: schema, ours: row.ours)
        #expect(problems.isEmpty, "\(problems)")
        // The sample with every field, written as both ends write bodies (SortedJSONEncoder) and as
        // Foundation's JSONEncoder with the same options wrote them before: the same bytes.
        if problems.isEmpty, let value = try JSONDecoder().decode(row.type, from: JSONEncoder().encode(schema.sample())) as? any Encodable {
            let foundation = JSONEncoder()
            foundation.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let ours = String(decoding: try IdentityToolkitJSON.encode(value), as: UTF8.self)
            #expect(ours == String(decoding: try foundation.encode(value), as: UTF8.self))
            #expect(ours.count > 2, "\(row.type) wrote no field")
        }
    }

    struct Misspelled: Decodable { var idToken: String?; var phoneNumbr: String? }
    struct WrongType: Decodable { var idToken: String?; var expiresIn: Int? }
    struct MissingRequired: Decodable { var idToken: String; var verificationId: String }

    @Test("the check itself: a misspelled field, a field of another type and a required field the schema lacks are each found and named")
    func checkFindsDifferences() async throws {
        guard let all = try await DiscoveryDocuments.schemas("v1") else { return }
        let schema = DiscoverySchema(name: "GoogleCloudIdentitytoolkitV1SignInWithPhoneNumberResponse", all: all)
        let misspelled = try contractProblems(Misspelled.self, schema: schema)
        #expect(misspelled.count == 1 && misspelled[0].contains("phoneNumbr is not in"))
        let wrongType = try contractProblems(WrongType.self, schema: schema)
        #expect(wrongType.count == 1 && wrongType[0].contains("expiresIn"))
        let missing = try contractProblems(MissingRequired.self, schema: schema)
        #expect(missing.count == 1 && missing[0].contains("requires verificationId"))
    }

    /// Every message declared in Sources/IdentityToolkitAPI has a row, or a line saying why no
    /// document describes it: a new message cannot slip past the check.
    @Test("every Codable message of IdentityToolkitAPI is held against a schema or listed as outside the documents")
    func everyMessageCovered() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Sources/IdentityToolkitAPI").standardized
        var declared: [String] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where file.hasSuffix(".swift") {
            var outer: [String] = []
            for line in try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false) {
                let indent = line.prefix { $0 == " " }.count
                guard let range = line.range(of: #"^ *(public|package) (struct|enum|final class) \w+"#, options: .regularExpression) else { continue }
                let name = String(line[range].split(separator: " ").last!)
                outer = Array(outer.prefix(indent / 4))
                if line.range(of: #": [^{]*(Codable|AuthRPCRequest|AuthRPCQueryRequest)"#, options: .regularExpression) != nil {
                    declared.append((outer + [name]).joined(separator: "."))
                }
                outer.append(name)
            }
        }
        let covered = Set(ContractTable.rows.map { String(reflecting: $0.type).replacingOccurrences(of: "IdentityToolkitAPI.", with: "") })
        let outside = Set(ContractTable.notInTheDocuments.keys.flatMap { $0.components(separatedBy: ", ") })
        let missing = declared.filter { !covered.contains($0) && !outside.contains($0) && !outside.contains(String($0.split(separator: ".")[0])) }
        #expect(declared.count > 60)
        #expect(missing.isEmpty, "no row in ContractTable and no line in notInTheDocuments for \(missing.sorted())")
    }

    @Test("reCAPTCHA enforcement states are the document's enum values")
    func enforcementStates() async throws {
        guard let all = try await DiscoveryDocuments.schemas("v2") else { return }
        let property = DiscoverySchema(name: "GoogleCloudIdentitytoolkitV2RecaptchaEnforcementState", all: all).properties["enforcementState"]
        guard case .object(let field) = property, case .array(let values) = field["enum"] else {
            Issue.record("RecaptchaEnforcementState.enforcementState has no enum in identitytoolkit.v2.json")
            return
        }
        let documented = Set(values.compactMap { if case .string(let value) = $0 { value } else { nil } })
        #expect(Set(RecaptchaEnforcement.allCases.map(\.rawValue)).isSubset(of: documented))
    }

    /// The fields the backend checks a body against (SchemaCheck.swift) are the schema's, exactly.
    @Test("each schema-checked message's field list is its schema's property list")
    func checkedFieldLists() async throws {
        let checked: [(any SchemaCheckedMessage.Type, String)] = [
            (SignUpNewUserRequest.self, "GoogleCloudIdentitytoolkitV1SignUpRequest"),
            (GetAccountInfoRequest.self, "GoogleCloudIdentitytoolkitV1GetAccountInfoRequest"),
            (SetAccountInfoRequest.self, "GoogleCloudIdentitytoolkitV1SetAccountInfoRequest"),
            (DeleteAccountRequest.self, "GoogleCloudIdentitytoolkitV1DeleteAccountRequest"),
            (BatchDeleteAccountsRequest.self, "GoogleCloudIdentitytoolkitV1BatchDeleteAccountsRequest"),
            (UploadAccountRequest.self, "GoogleCloudIdentitytoolkitV1UploadAccountRequest"),
            (UserRecord.self, "GoogleCloudIdentitytoolkitV1UserInfo"),
            (QueryUserInfoRequest.self, "GoogleCloudIdentitytoolkitV1QueryUserInfoRequest"),
            (VerifyCustomTokenRequest.self, "GoogleCloudIdentitytoolkitV1SignInWithCustomTokenRequest"),
            (VerifyPasswordRequest.self, "GoogleCloudIdentitytoolkitV1SignInWithPasswordRequest"),
            (GetOOBConfirmationCodeRequest.self, "GoogleCloudIdentitytoolkitV1GetOobCodeRequest"),
            (ResetPasswordRequest.self, "GoogleCloudIdentitytoolkitV1ResetPasswordRequest"),
            (CreateAuthURIRequest.self, "GoogleCloudIdentitytoolkitV1CreateAuthUriRequest"),
            (EmailLinkSignInRequest.self, "GoogleCloudIdentitytoolkitV1SignInWithEmailLinkRequest"),
            (VerifyClientRequest.self, "GoogleCloudIdentitytoolkitV1VerifyIosClientRequest"),
            (SendVerificationCodeRequest.self, "GoogleCloudIdentitytoolkitV1SendVerificationCodeRequest"),
            (VerifyPhoneNumberRequest.self, "GoogleCloudIdentitytoolkitV1SignInWithPhoneNumberRequest"),
            (VerifyAssertionRequest.self, "GoogleCloudIdentitytoolkitV1SignInWithIdpRequest"),
            (RevokeTokenRequest.self, "GoogleCloudIdentitytoolkitV2RevokeTokenRequest"),
            (StartMFAEnrollmentRequest.self, "GoogleCloudIdentitytoolkitV2StartMfaEnrollmentRequest"),
            (FinalizeMFAEnrollmentRequest.self, "GoogleCloudIdentitytoolkitV2FinalizeMfaEnrollmentRequest"),
            (WithdrawMFARequest.self, "GoogleCloudIdentitytoolkitV2WithdrawMfaRequest"),
            (StartMFASignInRequest.self, "GoogleCloudIdentitytoolkitV2StartMfaSignInRequest"),
            (FinalizeMFASignInRequest.self, "GoogleCloudIdentitytoolkitV2FinalizeMfaSignInRequest"),
            (TenantConfig.self, "GoogleCloudIdentitytoolkitAdminV2Tenant"),
        ]
        // Fields the Auth Emulator's spec has (firebase-tools src/emulator/auth/apiSpec.ts) and the
        // document's revision does not: kept, so that a client sending them gets UNSUPPORTED_FIELD
        // naming the field rather than "Unknown name".
        let emulatorOnly: [String: Set<String>] = ["GoogleCloudIdentitytoolkitV1SetAccountInfoRequest": ["deletePasskey"],
                                                   "GoogleCloudIdentitytoolkitV1UserInfo": ["passkeyInfo"],
                                                   "GoogleCloudIdentitytoolkitAdminV2Tenant": ["tenantId"]]
        guard let v1 = try await DiscoveryDocuments.schemas("v1"), let v2 = try await DiscoveryDocuments.schemas("v2") else { return }
        for (type, name) in checked {
            let all = name.hasPrefix("GoogleCloudIdentitytoolkitV1") ? v1 : v2
            let properties = Set(DiscoverySchema(name: name, all: all).properties.keys).union(emulatorOnly[name] ?? [])
            #expect(type.schemaFields.subtracting(properties).isEmpty, "\(type) checks fields \(type.schemaFields.subtracting(properties).sorted()) that \(name) does not have")
            #expect(properties.subtracting(type.schemaFields).isEmpty, "\(type) would refuse \(name)'s fields \(properties.subtracting(type.schemaFields).sorted()) as unknown")
        }
    }
}
