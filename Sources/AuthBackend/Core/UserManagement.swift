import IdentityToolkitAPI
import RS256
import Utilities
import Crypto
import Foundation

// User management as the Admin SDKs call it (`/identitytoolkit.googleapis.com/v1/projects/{p}/accounts…`
// with `Authorization: Bearer owner` against an emulator), and custom-token sign-in. Behaviour and
// error codes as the Firebase Auth Emulator's (firebase-tools `src/emulator/auth/operations.ts`:
// `signUp` when privileged, `lookup`, `setAccountInfoImpl`, `deleteAccount`, `batchDelete`,
// `batchGet`, `batchCreate`, `queryAccounts`, `signInWithCustomToken`), which follow the service.
// Where the emulator differs from the service on purpose (it never checks a custom token's
// signature; `maxResults=-1` lists everyone) this does as the emulator, since it stands in for it.

extension CoreCall {

    /// What a custom token's `aud` must be.
    static let customTokenAudience = "https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit"

    mutating func adminCreateUser(_ request: SignUpNewUserRequest, hash: PasswordHash?) throws(IdentityToolkitError) -> SignUpNewUserResponse {
        try enter(tenant: request.tenantId, endpoint: .adminCreateUser)
        let localId: String
        if let given = request.localId {
            try Self.validateLocalID(given)
            guard directory.byID[given] == nil else { throw IdentityToolkitError(.duplicateLocalID) }
            localId = given
        } else {
            localId = newLocalID(hint: request.phoneNumber ?? request.email)
        }
        var user = BackendUser(localId: localId, createdAt: now)
        if let phone = request.phoneNumber {
            let number = try Self.adminPhoneNumber(phone)
            guard directory.idByPhone[number] == nil else { throw IdentityToolkitError(.phoneNumberExists) }
            user.phoneNumber = number
        }
        if let email = request.email {
            user.email = try checkedEmail(email, for: localId)
            user.emailVerified = request.emailVerified ?? false
        }
        user.displayName = request.displayName
        user.photoUrl = request.photoUrl
        if request.disabled == true { user.disabled = true }
        if let hash {
            guard user.email != nil else { throw IdentityToolkitError(.missingEmail, "a password needs an email") }
            setPassword(hash, of: &user)
        }
        commit(.user(user))
        return SignUpNewUserResponse(localId: localId, email: user.email, displayName: user.displayName)
    }

    mutating func adminUpdate(_ request: SetAccountInfoRequest, hash: PasswordHash?) throws(IdentityToolkitError) -> SetAccountInfoResponse {
        try enter(tenant: request.tenantId, endpoint: .adminUpdate)
        guard let localId = request.localId, !localId.isEmpty else { throw IdentityToolkitError(.missingLocalID) }
        guard var user = directory.byID[localId] else { throw IdentityToolkitError(.userNotFound) }
        if let claims = request.customAttributes {
            try BackendCore.validateCustomClaims(claims)
            user.customAttributes = claims == "{}" ? nil : claims
        }
        if let disable = request.disableUser { user.disabled = disable }
        if let phone = request.phoneNumber, phone != user.phoneNumber {
            let number = try Self.adminPhoneNumber(phone)
            if let holder = directory.idByPhone[number], holder != localId { throw IdentityToolkitError(.phoneNumberExists) }
            user.phoneNumber = number
        }
        if let email = request.email {
            let checked = try checkedEmail(email, for: localId)
            if checked != user.email {
                user.email = checked
                user.emailVerified = false
            }
        }
        if let verified = request.emailVerified { user.emailVerified = verified }
        if let text = request.createdAt {
            guard let ms = Double(text) else { throw IdentityToolkitError(.invalidArgument, "createdAt is milliseconds since 1970, not \(text)") }
            user.createdAt = Date(timeIntervalSince1970: ms / 1000)
        }
        if let text = request.lastLoginAt {
            guard let ms = Double(text) else { throw IdentityToolkitError(.invalidArgument, "lastLoginAt is milliseconds since 1970, not \(text)") }
            user.lastLoginAt = Date(timeIntervalSince1970: ms / 1000)
        }
        if let text = request.validSince {
            guard let seconds = Int64(text) else { throw IdentityToolkitError(.invalidArgument, "validSince is seconds since 1970, not \(text)") }
            user.validSince = seconds
        }
        try Self.applyProfile(request, to: &user)
        if let hash {
            guard user.email != nil else { throw IdentityToolkitError(.missingEmail, "a password needs the user's email") }
            setPassword(hash, of: &user)
        }
        if let mfa = request.mfa {
            user.mfaEnrollments = try mfaEnrollments(mfa.enrollments ?? [], existing: user.mfaEnrollments ?? [])
            if user.mfaEnrollments?.isEmpty == true { user.mfaEnrollments = nil }
        }
        commit(.user(user))
        let info = Self.userInfo(user)
        return SetAccountInfoResponse(localId: localId, email: user.email, displayName: user.displayName, providerUserInfo: info.providerUserInfo)
    }
}

extension CoreCall {
    /// A new local ID: random (28 characters, as the emulator's), or with `--id-seed` derived from
    /// the seed and the user's first identity (`hint`: their phone number, Apple ID, email), so
    /// that the same user gets the same ID in every CI run; without a hint, from the seed and a
    /// counter. Never one in use.
    mutating func newLocalID(hint: String?) -> String {
        guard let seed = configuration.idSeed else { return randomID(length: 28) }
        var attempt = 0
        while true {
            let material = "\(seed)|\(hint ?? "user")|\(hint == nil ? directory.byID.count + attempt : attempt)"
            let id = String(Base64URL.encode(Array(SHA256.hash(data: Array(material.utf8)))).filter { $0.isLetter || $0.isNumber }.prefix(28))
            if directory.byID[id] == nil { return id }
            attempt += 1
        }
    }
}

extension CoreCall {

    // MARK: Create, look up, update, delete


    /// ``IdentityToolkit/adminLookup(_:)``'s rules.
    mutating func adminLookup(_ request: GetAccountInfoRequest) throws(IdentityToolkitError) -> GetAccountInfoResponse {
        try enter(tenant: request.tenantId, endpoint: .adminLookup)
        var found: [BackendUser] = []
        var seen = Set<String>()
        func add(_ user: BackendUser?) {
            if let user, seen.insert(user.localId).inserted { found.append(user) }
        }
        for id in request.localId ?? [] { add(directory.byID[id]) }
        for email in request.email ?? [] { add(directory.user(email: email)) }
        for phone in request.phoneNumber ?? [] {
            add((try? PhoneNumbers.validate(phone)).flatMap { directory.idByPhone[$0] }.flatMap { directory.byID[$0] })
        }
        for federated in request.federatedUserId ?? [] { add(directory.user(provider: federated.providerId, rawId: federated.rawId)) }
        return GetAccountInfoResponse(users: found.isEmpty ? nil : found.map(Self.userInfo))
    }




    /// What `accounts:update` changes alike for an admin and for the user with their ID token: the
    /// display name and photo URL, the attributes deleted (`deleteAttribute`), the providers
    /// unlinked (`deleteProvider`).
    static func applyProfile(_ request: SetAccountInfoRequest, to user: inout BackendUser) throws(IdentityToolkitError) {
        if let name = request.displayName { user.displayName = name }
        if let photo = request.photoUrl { user.photoUrl = photo }
        for attribute in request.deleteAttribute ?? [] {
            switch attribute {
            case .displayName: user.displayName = nil
            case .photoURL: user.photoUrl = nil
            case .email: user.email = nil; user.emailVerified = nil
            case .password: user.passwordHash = nil; user.salt = nil
            case .unspecified: break
            default: throw IdentityToolkitError(.invalidArgument, "deleteAttribute: \(attribute) is not DISPLAY_NAME, PHOTO_URL, EMAIL or PASSWORD")
            }
        }
        for provider in (request.deleteProvider ?? []).map(ProviderID.init(rawValue:)) {
            switch provider {
            case .phone: user.phoneNumber = nil
            case .apple: user.appleSub = nil
            case .password: user.passwordHash = nil; user.salt = nil; user.email = nil; user.emailVerified = nil
            default: user.otherProviders?.removeAll { $0.providerId == provider }
            }
        }
    }

    /// Second factors as an admin gives them (`update_user(multi_factor=…)`): phone numbers in
    /// E.164, IDs kept when given (one enrollment per ID) or made, `enrolledAt` RFC 3339 or now.
    mutating func mfaEnrollments(_ given: [MFAEnrollment], existing: [MFAEnrollmentRecord]) throws(IdentityToolkitError) -> [MFAEnrollmentRecord] {
        var out: [MFAEnrollmentRecord] = []
        var ids = Set<String>()
        for enrollment in given {
            guard let phone = enrollment.unobfuscatedPhoneInfo ?? enrollment.phoneInfo else {
                throw IdentityToolkitError(.invalidArgument, "Second factor not supported: each enrollment needs phoneInfo")
            }
            let number: String
            do { number = try PhoneNumbers.validate(phone) } catch {
                throw IdentityToolkitError(.invalidMFAPhoneNumber, "Invalid format.")
            }
            let id = enrollment.mfaEnrollmentId ?? randomString(bytes: 21)
            guard ids.insert(id).inserted else { throw IdentityToolkitError(.invalidArgument, "Enrollment id already exists: \(id)") }
            var at = now
            if let text = enrollment.enrolledAt {
                guard let parsed = RFC3339.date(text) else { throw IdentityToolkitError(.invalidArgument, "enrolledAt is RFC 3339, not \(text)") }
                at = parsed
            }
            out.append(MFAEnrollmentRecord(id: id, phoneNumber: number, displayName: enrollment.displayName, enrolledAt: at))
        }
        return out
    }

    /// ``IdentityToolkit/adminDelete(_:)``'s rules.
    mutating func adminDelete(_ request: DeleteAccountRequest) throws(IdentityToolkitError) -> DeleteAccountResponse {
        try enter(tenant: request.tenantId, endpoint: .adminDelete)
        guard let localId = request.localId, !localId.isEmpty else { throw IdentityToolkitError(.missingLocalID) }
        guard directory.byID[localId] != nil else { throw IdentityToolkitError(.userNotFound) }
        commit(.userDeleted(localId: localId))
        emit(.accountDeleted(uid: localId))
        return DeleteAccountResponse()
    }

    /// ``IdentityToolkit/adminBatchDelete(_:)``'s rules.
    mutating func adminBatchDelete(_ request: BatchDeleteAccountsRequest) throws(IdentityToolkitError) -> BatchDeleteAccountsResponse {
        try enter(tenant: request.tenantId, endpoint: .adminBatchDelete)
        let ids = request.localIds ?? []
        guard (1...BackendCore.maximumBatchSize).contains(ids.count) else {
            throw IdentityToolkitError(.localIDListExceedsLimit, "\(ids.count) IDs; 1 to \(BackendCore.maximumBatchSize) per call")
        }
        var errors: [BatchDeleteAccountsResponse.Failure] = []
        for (index, id) in ids.enumerated() {
            guard let user = directory.byID[id] else { continue }
            if user.disabled != true, request.force != true {
                errors.append(.init(index: index, localId: id, message: "NOT_DISABLED : Disable the account before batch deletion."))
                continue
            }
            commit(.userDeleted(localId: id))
        }
        return BatchDeleteAccountsResponse(errors: errors.isEmpty ? nil : errors)
    }

    // MARK: List, query

    /// ``IdentityToolkit/adminBatchGet(_:)``'s rules.
    mutating func adminBatchGet(_ request: DownloadAccountRequest) throws(IdentityToolkitError) -> DownloadAccountResponse {
        try enter(tenant: request.tenantId, endpoint: .adminBatchGet)
        let asked = request.maxResults ?? 20
        guard asked >= -1 else { throw IdentityToolkitError(.invalidArgument, "maxResults must be positive (or -1 for every user), not \(asked)") }
        let limit = asked == 0 ? 20 : min(asked, BackendCore.maximumBatchSize)
        var ids = directory.byID.keys.sorted()
        if let after = request.nextPageToken, !after.isEmpty { ids = Array(ids.drop { $0 <= after }) }
        var token: String?
        if limit >= 0, ids.count >= limit {
            ids = Array(ids.prefix(limit))
            token = ids.last
        }
        return DownloadAccountResponse(users: ids.compactMap { directory.byID[$0] }.map(Self.userInfo), nextPageToken: token)
    }

    /// ``IdentityToolkit/adminQuery(_:)``'s rules.
    mutating func adminQuery(_ request: QueryUserInfoRequest) throws(IdentityToolkitError) -> QueryUserInfoResponse {
        try enter(tenant: request.tenantId, endpoint: .adminQuery)
        func int(_ text: String?, _ name: String, default value: Int) throws(IdentityToolkitError) -> Int {
            guard let text else { return value }
            guard let number = Int(text), number >= 0 else { throw IdentityToolkitError(.invalidArgument, "\(name) must be a non-negative integer, not \(text)") }
            return number
        }
        let limit = try int(request.limit, "limit", default: 500)
        guard limit <= 500 else { throw IdentityToolkitError(.invalidArgument, "limit must be at most 500, not \(limit)") }
        let offset = try int(request.offset, "offset", default: 0)
        var users = Array(directory.byID.values)
        if let expressions = request.expression, !expressions.isEmpty {
            users = users.filter { user in
                expressions.contains { e in
                    (e.userId.map { $0 == user.localId } ?? true)
                        && (e.email.map { $0.lowercased() == user.email?.lowercased() } ?? true)
                        && (e.phoneNumber.map { $0 == user.phoneNumber } ?? true)
                }
            }
        }
        let descending: Bool
        switch request.order ?? .ascending {
        case .ascending, .unspecified: descending = false
        case .descending: descending = true
        case let other: throw IdentityToolkitError(.invalidArgument, "order is ASC or DESC, not \(other)")
        }
        let key: (BackendUser) -> String
        switch request.sortBy ?? .userID {
        case .userID, .unspecified: key = { $0.localId }
        case .name: key = { $0.displayName ?? "" }
        case .userEmail: key = { $0.email ?? "" }
        case .createdAt: key = { String(format: "%020.3f", $0.createdAt.timeIntervalSince1970) }
        case .lastLoginAt: key = { String(format: "%020.3f", $0.lastLoginAt?.timeIntervalSince1970 ?? 0) }
        case let other: throw IdentityToolkitError(.invalidArgument, "sortBy is USER_ID, NAME, USER_EMAIL, CREATED_AT or LAST_LOGIN_AT, not \(other)")
        }
        users.sort { a, b in
            let (ka, kb) = (key(a), key(b))
            if ka != kb { return descending ? ka > kb : ka < kb }
            return a.localId < b.localId
        }
        if request.returnUserInfo == false { return QueryUserInfoResponse(recordsCount: String(users.count), userInfo: nil) }
        let page = Array(users.dropFirst(offset).prefix(limit))
        return QueryUserInfoResponse(recordsCount: String(page.count), userInfo: page.map(Self.userInfo))
    }

    // MARK: Import

    /// ``IdentityToolkit/adminBatchCreate(_:)``'s rules.
    mutating func adminBatchCreate(_ request: UploadAccountRequest) throws(IdentityToolkitError) -> UploadAccountResponse {
        try enter(tenant: request.tenantId, endpoint: .adminBatchCreate)
        guard let users = request.users, !users.isEmpty else { throw IdentityToolkitError(.missingUserAccount) }
        guard users.count <= BackendCore.maximumBatchSize else {
            throw IdentityToolkitError(.invalidArgument, "\(users.count) users; at most \(BackendCore.maximumBatchSize) per batchCreate")
        }
        if request.sanityCheck == true {
            var seen = Set<String>()
            for user in users {
                for provider in user.providerUserInfo ?? [] {
                    let key = "\(provider.providerId):\(provider.rawId ?? "")"
                    guard seen.insert(key).inserted else {
                        throw IdentityToolkitError(.duplicateRawID, "Provider id(\(provider.providerId)), Raw id(\(provider.rawId ?? ""))")
                    }
                }
            }
        }
        if request.allowOverwrite != true {
            var seen = Set<String>()
            for user in users where !seen.insert(user.localId).inserted {
                throw IdentityToolkitError(.duplicateLocalID, user.localId)
            }
        }
        var errors: [UploadAccountResponse.Failure] = []
        for (index, record) in users.enumerated() {
            do throws(IdentityToolkitError) {
                let user = try importedUser(record, allowOverwrite: request.allowOverwrite == true)
                commit(.user(user))
            } catch {
                if error.code == .stateUnavailable { throw error }
                errors.append(.init(index: index, message: error.detail ?? error.code.rawValue))
            }
        }
        return UploadAccountResponse(error: errors)
    }

    /// One user of an import, checked against the others.
    mutating func importedUser(_ record: UserRecord, allowOverwrite: Bool) throws(IdentityToolkitError) -> BackendUser {
        let localId = record.localId
        guard !localId.isEmpty else { throw IdentityToolkitError(.invalidArgument, "localId is missing") }
        if let given = record.tenantId, given != tenant {
            throw IdentityToolkitError(.invalidArgument, "Tenant id in userInfo does not match the tenant id in request.")
        }
        try Self.validateLocalID(localId)
        if directory.byID[localId] != nil, !allowOverwrite {
            throw IdentityToolkitError(.invalidArgument, "localId belongs to an existing account - can not overwrite.")
        }
        var createdAt = now
        if let text = record.createdAt, let ms = Double(text) { createdAt = Date(timeIntervalSince1970: ms / 1000) }
        var user = BackendUser(localId: localId, createdAt: createdAt)
        user.displayName = record.displayName
        user.photoUrl = record.photoUrl
        if let text = record.lastLoginAt, let ms = Double(text) { user.lastLoginAt = Date(timeIntervalSince1970: ms / 1000) }
        if let claims = record.customAttributes {
            do { try BackendCore.validateCustomClaims(claims) } catch {
                switch error.code {
                case .invalidClaims: throw IdentityToolkitError(.invalidClaims, "Invalid custom claims provided.")
                case .claimsTooLarge: throw IdentityToolkitError(.claimsTooLarge, "Custom claims provided are too large.")
                default: throw IdentityToolkitError(.forbiddenClaim, "Custom claims provided include a reserved claim.")
                }
            }
            user.customAttributes = claims
        }
        if let phone = record.phoneNumber {
            guard let number = try? PhoneNumbers.validate(phone) else { throw IdentityToolkitError(.invalidArgument, "phone number format is invalid") }
            if let holder = directory.idByPhone[number], holder != localId {
                throw IdentityToolkitError(.invalidArgument, "phone number \(number) exists in other account in database")
            }
            user.phoneNumber = number
        }
        for provider in record.providerUserInfo ?? [] {
            switch provider.providerId {
            case .phone, .password: continue   // From phoneNumber and passwordHash.
            default:
                guard let rawId = provider.rawId, !rawId.isEmpty else {
                    throw IdentityToolkitError(.invalidArgument, "federatedId or (providerId & rawId) is required")
                }
                if let holder = directory.user(provider: provider.providerId, rawId: rawId), holder.localId != localId {
                    throw IdentityToolkitError(.invalidArgument, "raw id exists in other account in database")
                }
                if provider.providerId == .apple {
                    user.appleSub = rawId
                } else {
                    user.otherProviders = (user.otherProviders ?? []) + [provider]
                }
            }
        }
        if let email = record.email {
            user.email = try checkedEmail(email, for: localId, inImport: true)
        }
        user.emailVerified = record.emailVerified ?? false
        if user.email == nil { user.emailVerified = nil }
        user.disabled = record.disabled == true ? true : nil
        user.passwordHash = record.passwordHash
        user.salt = record.salt
        user.passwordUpdatedAt = record.passwordUpdatedAt
        user.customAuth = record.customAuth
        user.emailLinkSignin = record.emailLinkSignin == true ? true : nil
        // The import is the tokens' new start, as the emulator's `validSince` = upload time.
        user.validSince = Int64(now.timeIntervalSince1970)
        if let enrollments = record.mfaInfo, !enrollments.isEmpty {
            guard user.email != nil else { throw IdentityToolkitError(.invalidArgument, "Second factor account requires email to be presented.") }
            guard user.emailVerified == true else { throw IdentityToolkitError(.invalidArgument, "Second factor account requires email to be verified.") }
            user.mfaEnrollments = try mfaEnrollments(enrollments, existing: [])
        }
        return user
    }

    // MARK: Custom tokens


    mutating func signInWithCustomToken(_ request: VerifyCustomTokenRequest) throws(IdentityToolkitError) -> SignInDecision<VerifyCustomTokenResponse> {
        let endpoint = BackendOperation.signInWithCustomToken
        try enter(tenant: request.tenantId, endpoint: endpoint)
        guard let token = request.token, !token.isEmpty else { throw reject(endpoint, IdentityToolkitError(.missingCustomToken)) }
        let payload: [String: JSONValue]
        if token.hasPrefix("{") {
            guard let parsed = try? JSONDecoder().decode([String: JSONValue].self, from: Data(token.utf8)) else {
                throw reject(endpoint, IdentityToolkitError(.invalidCustomToken, "((Auth Emulator only accepts strict JSON or JWTs as fake custom tokens.))"))
            }
            payload = parsed
        } else {
            guard let jws = CompactJWS(token), let bytes = Base64URL.decode(jws.payload),
                  let parsed = try? JSONDecoder().decode([String: JSONValue].self, from: Data(bytes)) else {
                throw reject(endpoint, IdentityToolkitError(.invalidCustomToken, "Invalid assertion format"))
            }
            guard parsed["aud"] == .string(Self.customTokenAudience) else {
                let aud: String = if case .string(let text) = parsed["aud"] { text } else { "none" }
                throw reject(endpoint, IdentityToolkitError(.invalidCustomToken, "((Invalid aud (audience): \(aud) Note: Firebase ID Tokens / third-party tokens cannot be used with signInWithCustomToken.))"))
            }
            payload = parsed
        }
        let uid: String? = switch payload["uid"] ?? payload["user_id"] {
        case .string(let text): text
        case .number(let number): number == number.rounded() ? String(Int64(number)) : String(number)
        case .bool(let flag): String(flag)
        default: nil
        }
        guard let uid, !uid.isEmpty else { throw reject(endpoint, IdentityToolkitError(.missingIdentifier)) }
        // A tenant's custom token (the Admin SDKs' `auth_for_tenant(t).create_custom_token`) names
        // it as `tenant_id`; it signs in to that tenant only (the emulator's TENANT_ID_MISMATCH).
        let tokenTenant: String? = if case .string(let text) = payload["tenant_id"] { text } else { nil }
        guard tokenTenant == tenant else {
            throw reject(endpoint, IdentityToolkitError(.tenantIDMismatch, "the custom token is for tenant \(tokenTenant ?? "none"), the request for \(tenant ?? "none")"))
        }
        do { try Self.validateLocalID(uid) } catch { throw reject(endpoint, IdentityToolkitError(.invalidCustomToken, "uid must be 1 to 128 characters")) }
        var claimsText: String?
        if let claims = payload["claims"] {
            guard case .object(let object) = claims else { throw reject(endpoint, IdentityToolkitError(.invalidClaims)) }
            if let reserved = object.keys.sorted().first(where: FirebaseIDTokenClaims.reservedClaimNames.contains) {
                throw reject(endpoint, IdentityToolkitError(.forbiddenClaim, reserved))
            }
            claimsText = object.isEmpty ? nil : String(decoding: (try? IdentityToolkitJSON.encode(claims)) ?? [], as: UTF8.self)
        }
        var user = directory.byID[uid] ?? BackendUser(localId: uid, createdAt: now)
        let isNewUser = directory.byID[uid] == nil
        try requireEnabled(user, endpoint: endpoint)
        if user.customAuth != true {
            user.customAuth = true
            commit(.user(user))
        }
        if user.hasSecondFactor {
            // The service asks custom-token users for their second factor too.
            throw reject(endpoint, IdentityToolkitError(.unsupportedFirstFactor, "custom-token sign-in of a user with a second factor is not modelled"))
        }
        return .tokens(try grantTokens(for: user, provider: .custom, claims: claimsText, endpoint: endpoint)) { tokens in
            VerifyCustomTokenResponse(idToken: tokens.idToken, refreshToken: tokens.refreshToken, expiresIn: tokens.expiresIn, isNewUser: isNewUser)
        }
    }

    // MARK: The emulator's own

    /// ``IdentityToolkit/deleteAllAccounts()``'s rules.
    mutating func deleteAllAccounts(tenant: String?) throws(IdentityToolkitError) {
        commit(.accountsReset(tenant: tenant))
    }

    /// ``IdentityToolkit/importAccounts(_:overwrite:)``'s rules: a whole accounts file, all of it or
    /// none. Each user is checked as `batchCreate` checks it, against the state with the file's
    /// earlier users in it, before any is kept; an ID twice in the file, or (without `overwrite`)
    /// an ID that exists, refuses the file naming them.
    mutating func importAccounts(_ users: [UserRecord], overwrite: Bool) throws(IdentityToolkitError) -> (imported: Int, replaced: Int) {
        guard !users.isEmpty else { throw IdentityToolkitError(.missingUserAccount, "the file has no users") }
        var seen = Set<String>()
        let twice = users.map(\.localId).filter { !seen.insert($0).inserted }
        guard twice.isEmpty else {
            throw IdentityToolkitError(.duplicateLocalID, "the file names \(Self.listed(Set(twice).sorted())) more than once: nothing was imported")
        }
        let existing = users.map(\.localId).filter { directory.byID[$0] != nil }
        if !existing.isEmpty, !overwrite {
            throw IdentityToolkitError(.duplicateLocalID, "\(Self.listed(existing)) \(existing.count == 1 ? "exists" : "exist"): nothing was imported (import with overwrite to replace them)")
        }
        var trial = self
        for (index, record) in users.enumerated() {
            do throws(IdentityToolkitError) {
                trial.tryOut(.user(try trial.importedUser(record, allowOverwrite: true)))
            } catch {
                throw IdentityToolkitError(error.code, "user \(index) (\(record.localId)): \(error.detail ?? error.message): nothing was imported")
            }
        }
        for record in users { commit(.user(try importedUser(record, allowOverwrite: true))) }
        return (users.count, existing.count)
    }

    /// IDs in a message: the first five, then how many more.
    private static func listed(_ ids: [String]) -> String {
        let shown = ids.prefix(5).joined(separator: ", ")
        return ids.count > 5 ? "\(shown) and \(ids.count - 5) more" : shown
    }

    /// ``IdentityToolkit/exportAccounts()``'s rules.
    mutating func exportAccounts() throws(IdentityToolkitError) -> DownloadAccountResponse {
        DownloadAccountResponse(users: directory.byID.keys.sorted().compactMap { directory.byID[$0] }.map(Self.userInfo), nextPageToken: nil)
    }

    // MARK: Checks


    /// Sets a user's password: every session before this one ends (``BackendUser/validSince``).
    mutating func setPassword(_ hash: PasswordHash, of user: inout BackendUser) {
        user.passwordHash = hash.hash
        user.salt = hash.salt
        user.passwordUpdatedAt = (now.timeIntervalSince1970 * 1000).rounded()
        user.validSince = Int64(now.timeIntervalSince1970)
    }

    /// A local ID: 1 to 128 characters (the Admin SDKs' and the service's rule).
    static func validateLocalID(_ id: String) throws(IdentityToolkitError) {
        guard !id.isEmpty, id.count <= 128 else { throw IdentityToolkitError(.invalidArgument, "localId must be 1 to 128 characters") }
    }

    /// A phone number an admin gives: E.164 (`INVALID_PHONE_NUMBER : Invalid format.` otherwise).
    static func adminPhoneNumber(_ text: String) throws(IdentityToolkitError) -> String {
        do { return try PhoneNumbers.validate(text) } catch { throw IdentityToolkitError(.invalidPhoneNumber, "Invalid format.") }
    }

    /// An email an admin gives: `x@y`, lower-cased, not another user's (INVALID_EMAIL, EMAIL_EXISTS).
    mutating func checkedEmail(_ email: String, for localId: String, inImport: Bool = false) throws(IdentityToolkitError) -> String {
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw inImport ? IdentityToolkitError(.invalidArgument, "email is invalid") : IdentityToolkitError(.invalidEmail)
        }
        let canonical = email.lowercased()
        if let holder = directory.user(email: canonical), holder.localId != localId {
            throw inImport ? IdentityToolkitError(.invalidArgument, "email exists in other account in database") : IdentityToolkitError(.emailExists)
        }
        return canonical
    }

}

extension BackendCore {
    /// The most users one batch call takes (`accounts:batchDelete`, `accounts:batchCreate`), as the service.
    static let maximumBatchSize = 1000

    /// Custom claims are at most this many characters of JSON (the service's limit).
    static let maximumCustomClaimsLength = 1000

    /// Custom claims as the Admin SDKs send them: a JSON object of at most 1,000 characters with
    /// no reserved claim (CLAIMS_TOO_LARGE, INVALID_CLAIMS, FORBIDDEN_CLAIM : name).
    static func validateCustomClaims(_ text: String) throws(IdentityToolkitError) {
        guard text.count <= maximumCustomClaimsLength else { throw IdentityToolkitError(.claimsTooLarge) }
        guard let object = try? JSONDecoder().decode([String: JSONValue].self, from: Data(text.utf8)) else {
            throw IdentityToolkitError(.invalidClaims)
        }
        if let reserved = object.keys.sorted().first(where: FirebaseIDTokenClaims.reservedClaimNames.contains) {
            throw IdentityToolkitError(.forbiddenClaim, reserved)
        }
    }
}
