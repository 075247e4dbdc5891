import Foundation
import IdentityToolkitAPI
import Utilities

/// A row of the backend's state as a fleet's store keeps it: its key (``StateTable/prefix`` and the
/// key in its table) and its value as JSON, nil for a row that is gone.
package struct StateRow: Sendable, Hashable {
    package var key: String
    package var text: String?
    package init(key: String, text: String?) {
        self.key = key
        self.text = text
    }
}

extension StateTableKey {
    /// The key a row's key names in its table.
    static func key(inRow rowKey: String) -> Self? {
        if let string = rowKey as? Self { return string }
        if Self.self == SignInID.self { return SignInID(rawValue: rowKey) as? Self }
        return nil
    }
}

/// How a row's value is written: JSON, dates as seconds since 1970 (as the journal's records).
enum RowCoding {
    static func text<Value: Encodable>(_ value: Value) throws(IdentityToolkitError) -> String {
        do { return String(decoding: try encoder.encode(value), as: UTF8.self) } catch {
            throw IdentityToolkitError(.stateUnavailable, "cannot write a row of the backend's state: \(error)", status: 500)
        }
    }

    static func value<Value: Decodable>(_ type: Value.Type, _ text: String, row: String) throws(IdentityToolkitError) -> Value {
        do { return try decoder.decode(type, from: Data(text.utf8)) } catch {
            throw IdentityToolkitError(.stateCorrupt, "row \(row) of the fleet's store is not one this authsim (\(AuthsimVersion.current)) reads: \(error)",
                                       status: 500)
        }
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        // The same value, the same text: a row that did not change reads as unchanged.
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()
    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()
}

/// A table of the state as rows, whatever its keys and values: what the state's row functions
/// reach each table through (``BackendState/table(_:)``, ``UserDirectory/table(_:)``).
protocol RowTable {
    func changedRows() throws(IdentityToolkitError) -> [StateRow]
    func row(_ key: String) throws(IdentityToolkitError) -> StateRow
    func allRows() throws(IdentityToolkitError) -> [StateRow]
}

extension StateTable: RowTable where Value: Codable {}

extension StateTable where Value: Codable {
    /// The rows changed since ``forgetChanges()``, with their values now.
    func changedRows() throws(IdentityToolkitError) -> [StateRow] {
        var rows: [StateRow] = []
        for key in changed {
            rows.append(StateRow(key: rowKey(key), text: try storage[key].map { value throws(IdentityToolkitError) in try RowCoding.text(value) }))
        }
        return rows
    }

    /// The row of `key` (its key in the table) as the table holds it, read without noting anything.
    func row(_ key: String) throws(IdentityToolkitError) -> StateRow {
        let value = Key.key(inRow: key).flatMap { storage[$0] }
        return StateRow(key: prefix + key, text: try value.map { value throws(IdentityToolkitError) in try RowCoding.text(value) })
    }

    /// Every row the table holds, read without noting anything.
    func allRows() throws(IdentityToolkitError) -> [StateRow] {
        var rows: [StateRow] = []
        rows.reserveCapacity(storage.count)
        for (key, value) in storage { rows.append(StateRow(key: rowKey(key), text: try RowCoding.text(value))) }
        return rows
    }

    /// Puts in the row `key` (its key in the table) read from the store, `text` nil for none.
    mutating func loadRow(_ key: String, _ text: String?) throws(IdentityToolkitError) {
        guard let typed = Key.key(inRow: key) else {
            throw IdentityToolkitError(.stateCorrupt, "row \(prefix)\(key) of the fleet's store has a key this authsim does not read", status: 500)
        }
        load(typed, try text.map { text throws(IdentityToolkitError) in try RowCoding.value(Value.self, text, row: prefix + key) })
    }
}

extension UserDirectory {
    /// One of the users' tables by name (an index, or the users).
    func table(_ name: StateTableName) -> any RowTable {
        switch name {
        case .users: byID
        case .idByEmail: idByEmail
        case .idByPhone: idByPhone
        case .idByAppleSub: idByAppleSub
        default: idByProviderID
        }
    }

    func changedRows() throws(IdentityToolkitError) -> [StateRow] {
        var rows: [StateRow] = []
        for name in StateTableName.allCases where name.isScoped { rows += try table(name).changedRows() }
        return rows
    }
}

extension StateTableName {
    /// Whether the table's rows are a tenant's (a scope between the table's name and the key).
    var isScoped: Bool {
        switch self {
        case .users, .idByEmail, .idByPhone, .idByAppleSub, .idByProviderID: true
        default: false
        }
    }
}

extension BackendState {
    /// The rows of every table changed since ``forgetChanges()``, with their values now (what a
    /// fleet node writes when its batch commits).
    func changedRows() throws(IdentityToolkitError) -> [StateRow] {
        var rows: [StateRow] = []
        for name in StateTableName.allCases where !name.isScoped { rows += try table(name).changedRows() }
        rows += try projectUsers.changedRows()
        for tenant in tenantUsers.keys.sorted() { rows += try tenantUsers[tenant]!.changedRows() }
        return rows
    }

    /// One of the state's tables of no tenant by name; for a users' table, the project's.
    func table(_ name: StateTableName) -> any RowTable {
        switch name {
        case .receipts: receipts
        case .awaitingCode: awaitingCode
        case .sessions: sessions
        case .latestSession: latestSession
        case .refreshTokens: refreshTokens
        case .mfaPending: mfaPending
        case .temporaryProofs: temporaryProofs
        case .enterpriseTokens: enterpriseTokens
        case .recaptchaTokens: recaptchaTokens
        case .oobCodes: oobCodes
        case .totpSessions: totpSessions
        case .tenants: tenants
        case .spentAppleTokens: spentAppleTokens
        case .pendingAppleTokens: pendingAppleTokens
        case .revokedAppleCodes: revokedAppleCodes
        case .appleConsents: appleConsents
        case .sms: smsRows
        case .silentPushes: silentPushRows
        case .sharedConfig: sharedConfig
        case .users, .idByEmail, .idByPhone, .idByAppleSub, .idByProviderID: projectUsers.table(name)
        }
    }

    /// Nothing changed from here on (the changes are written).
    mutating func forgetChanges() {
        receipts.forgetChanges(); awaitingCode.forgetChanges(); sessions.forgetChanges(); latestSession.forgetChanges()
        refreshTokens.forgetChanges(); mfaPending.forgetChanges(); temporaryProofs.forgetChanges(); enterpriseTokens.forgetChanges()
        recaptchaTokens.forgetChanges(); oobCodes.forgetChanges(); totpSessions.forgetChanges(); tenants.forgetChanges()
        spentAppleTokens.forgetChanges(); pendingAppleTokens.forgetChanges(); revokedAppleCodes.forgetChanges(); appleConsents.forgetChanges()
        sharedConfig.forgetChanges(); silentPushRows.forgetChanges(); smsRows.forgetChanges()
        projectUsers.forgetChanges()
        for tenant in Array(tenantUsers.keys) { tenantUsers[tenant]!.forgetChanges() }
    }

    /// A row key's parts: its table, its tenant (nil for the project's own users; "" for a table
    /// of no tenant) and its key in the table; nil key for a prefix that ends at the table or tenant.
    static func parse(row: String) throws(IdentityToolkitError) -> (table: StateTableName, scope: String?, key: String) {
        guard let slash = row.firstIndex(of: "/"), let table = StateTableName(rawValue: String(row[..<slash])) else {
            throw IdentityToolkitError(.stateCorrupt, "row \(row) of the fleet's store is of no table this authsim (\(AuthsimVersion.current)) knows",
                                       status: 500)
        }
        let key = String(row[row.index(after: slash)...])
        guard table.isScoped else { return (table, "", key) }
        guard let scopeEnd = key.firstIndex(of: "/") else {
            throw IdentityToolkitError(.stateCorrupt, "row \(row) of the fleet's store names no tenant", status: 500)
        }
        let scope = String(key[..<scopeEnd])
        return (table, scope.isEmpty ? nil : scope, String(key[key.index(after: scopeEnd)...]))
    }

    /// The row `key` as this state holds it (text nil: none), read without noting anything: what
    /// a state that holds everything (a journal's) gives a fleet's store.
    func row(_ key: String) throws(IdentityToolkitError) -> StateRow {
        let (name, scope, inTable) = try Self.parse(row: key)
        return try (users(holding: name, scope)?.table(name) ?? table(name)).row(inTable)
    }

    /// The users whose table `name` is, of tenant `scope` (nil: the project's); nil for a table of no tenant.
    private func users(holding name: StateTableName, _ scope: String?) -> UserDirectory? {
        guard name.isScoped else { return nil }
        return scope.map { tenantUsers[$0] ?? UserDirectory(tenant: $0) } ?? projectUsers
    }

    /// Every row the state holds, in every table and tenant: what a fleet's store gets from a state
    /// that holds everything (a journal's, or the records of an older fleet).
    func allRows() throws(IdentityToolkitError) -> [StateRow] {
        var rows: [StateRow] = []
        for name in StateTableName.allCases where !name.isScoped { rows += try table(name).allRows() }
        for name in StateTableName.allCases where name.isScoped {
            rows += try projectUsers.table(name).allRows()
            for tenant in tenantUsers.keys.sorted() { rows += try tenantUsers[tenant]!.table(name).allRows() }
        }
        return rows
    }

    /// Every row under `prefix` (a table's, or a tenant's users' table's: ``StateTable/prefix``).
    func rows(under prefix: String) throws(IdentityToolkitError) -> [StateRow] {
        let (name, scope, _) = try Self.parse(row: prefix)
        return try (users(holding: name, scope)?.table(name) ?? table(name)).allRows()
    }

    /// Puts in a row read from a fleet's store (`text` nil: the store has none). Not a change.
    mutating func loadRow(_ row: StateRow) throws(IdentityToolkitError) {
        let (table, scope, key) = try Self.parse(row: row.key)
        if table.isScoped {
            guard let scope else { return try projectUsers.loadRow(table, key, row.text) }
            var users = tenantUsers[scope] ?? UserDirectory(tenant: scope, reads: reads)
            try users.loadRow(table, key, row.text)
            tenantUsers[scope] = users
            return
        }
        switch table {
        case .receipts: try receipts.loadRow(key, row.text)
        case .awaitingCode: try awaitingCode.loadRow(key, row.text)
        case .sessions: try sessions.loadRow(key, row.text)
        case .latestSession: try latestSession.loadRow(key, row.text)
        case .refreshTokens: try refreshTokens.loadRow(key, row.text)
        case .mfaPending: try mfaPending.loadRow(key, row.text)
        case .temporaryProofs: try temporaryProofs.loadRow(key, row.text)
        case .enterpriseTokens: try enterpriseTokens.loadRow(key, row.text)
        case .recaptchaTokens: try recaptchaTokens.loadRow(key, row.text)
        case .oobCodes: try oobCodes.loadRow(key, row.text)
        case .totpSessions: try totpSessions.loadRow(key, row.text)
        case .tenants: try tenants.loadRow(key, row.text)
        case .spentAppleTokens: try spentAppleTokens.loadRow(key, row.text)
        case .pendingAppleTokens: try pendingAppleTokens.loadRow(key, row.text)
        case .revokedAppleCodes: try revokedAppleCodes.loadRow(key, row.text)
        case .appleConsents: try appleConsents.loadRow(key, row.text)
        case .sms: try smsRows.loadRow(key, row.text)
        case .silentPushes: try silentPushRows.loadRow(key, row.text)
        case .sharedConfig: try sharedConfig.loadRow(key, row.text)
        case .users, .idByEmail, .idByPhone, .idByAppleSub, .idByProviderID: break
        }
    }
}

extension BackendState {
    /// When a fleet's store may drop `row` (nil: never): its lifetime and the configuration's
    /// retention after it, as ``purge(now:configuration:)`` drops it from a journal's state.
    func expiry(of row: StateRow, configuration: BackendConfiguration) -> Date? {
        guard row.text != nil, let (table, scope, key) = try? Self.parse(row: row.key) else { return nil }
        let keep = configuration.expiredRetention
        func after(_ at: Date?, _ lifetime: TimeInterval) -> Date? { at.map { $0.addingTimeInterval(lifetime + keep) } }
        _ = scope
        switch table {
        case .receipts: return after(receipts.storage[key]?.issuedAt, configuration.receiptLifetime)
        case .awaitingCode: return SignInID.key(inRow: key).flatMap { awaitingCode.storage[$0] }.map { $0.addingTimeInterval(BackendCore.fallbackWindow) }
        case .sessions: return after(sessions.storage[key]?.createdAt, configuration.codeLifetime)
        case .latestSession: return after(latestSession.storage[key].flatMap { sessions.storage[$0]?.createdAt }, configuration.codeLifetime)
        case .recaptchaTokens: return after(recaptchaTokens.storage[key]?.issuedAt, configuration.recaptchaTokenLifetime)
        case .sms:
            let quotas = configuration.smsPerNumberPerDay != nil || configuration.smsPerProjectPerDay != nil
            return after(smsRows.storage[key]?.sentAt, quotas ? 86_400 : configuration.codeLifetime)
        case .spentAppleTokens: return after(spentAppleTokens.storage[key], AppleIDProvider.tokenLifetime)
        case .pendingAppleTokens: return pendingAppleTokens.storage[key].map { $0.at.addingTimeInterval(86_400) }
        case .mfaPending: return after(mfaPending.storage[key]?.at, configuration.mfaPendingCredentialLifetime)
        case .temporaryProofs: return after(temporaryProofs.storage[key]?.at, configuration.temporaryProofLifetime)
        case .enterpriseTokens: return after(enterpriseTokens.storage[key]?.issuedAt, BackendCore.enterpriseTokenLifetime)
        case .oobCodes: return after(oobCodes.storage[key]?.message.sentAt, configuration.oobCodeLifetime)
        case .totpSessions: return after(totpSessions.storage[key]?.createdAt, BackendCore.totpEnrollmentWindow)
        // The list keeps the latest 1,000: a day is more than a fleet's inspector shows.
        case .silentPushes: return silentPushRows.storage[key].map { $0.at.addingTimeInterval(86_400) }
        case .refreshTokens, .tenants, .revokedAppleCodes, .appleConsents, .sharedConfig,
             .users, .idByEmail, .idByPhone, .idByAppleSub, .idByProviderID: return nil
        }
    }
}
