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
    func changedRows() throws(IdentityToolkitError) -> [StateRow] {
        try byID.changedRows() + idByEmail.changedRows() + idByPhone.changedRows() + idByAppleSub.changedRows() + idByProviderID.changedRows()
    }

    mutating func forgetChanges() {
        byID.forgetChanges()
        idByEmail.forgetChanges()
        idByPhone.forgetChanges()
        idByAppleSub.forgetChanges()
        idByProviderID.forgetChanges()
    }

    /// The row `key` of `table` (one of the users' tables).
    func row(_ table: StateTableName, _ key: String) throws(IdentityToolkitError) -> StateRow {
        switch table {
        case .users: try byID.row(key)
        case .idByEmail: try idByEmail.row(key)
        case .idByPhone: try idByPhone.row(key)
        case .idByAppleSub: try idByAppleSub.row(key)
        default: try idByProviderID.row(key)
        }
    }

    func allRows(_ table: StateTableName) throws(IdentityToolkitError) -> [StateRow] {
        switch table {
        case .users: try byID.allRows()
        case .idByEmail: try idByEmail.allRows()
        case .idByPhone: try idByPhone.allRows()
        case .idByAppleSub: try idByAppleSub.allRows()
        default: try idByProviderID.allRows()
        }
    }

    mutating func loadRow(_ table: StateTableName, _ key: String, _ text: String?) throws(IdentityToolkitError) {
        switch table {
        case .users: try byID.loadRow(key, text)
        case .idByEmail: try idByEmail.loadRow(key, text)
        case .idByPhone: try idByPhone.loadRow(key, text)
        case .idByAppleSub: try idByAppleSub.loadRow(key, text)
        default: try idByProviderID.loadRow(key, text)
        }
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
        var rows = try receipts.changedRows() + awaitingCode.changedRows() + sessions.changedRows() + latestSession.changedRows()
        rows += try refreshTokens.changedRows() + mfaPending.changedRows() + temporaryProofs.changedRows() + enterpriseTokens.changedRows()
        rows += try recaptchaTokens.changedRows() + oobCodes.changedRows() + totpSessions.changedRows() + tenants.changedRows()
        rows += try spentAppleTokens.changedRows() + pendingAppleTokens.changedRows() + revokedAppleCodes.changedRows() + appleConsents.changedRows()
        rows += try projectUsers.changedRows()
        for tenant in tenantUsers.keys.sorted() { rows += try tenantUsers[tenant]!.changedRows() }
        return rows
    }

    /// Nothing changed from here on (the changes are written).
    mutating func forgetChanges() {
        receipts.forgetChanges(); awaitingCode.forgetChanges(); sessions.forgetChanges(); latestSession.forgetChanges()
        refreshTokens.forgetChanges(); mfaPending.forgetChanges(); temporaryProofs.forgetChanges(); enterpriseTokens.forgetChanges()
        recaptchaTokens.forgetChanges(); oobCodes.forgetChanges(); totpSessions.forgetChanges(); tenants.forgetChanges()
        spentAppleTokens.forgetChanges(); pendingAppleTokens.forgetChanges(); revokedAppleCodes.forgetChanges(); appleConsents.forgetChanges()
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
        let (table, scope, inTable) = try Self.parse(row: key)
        if table.isScoped {
            let users = scope.map { tenantUsers[$0] ?? UserDirectory(tenant: $0) } ?? projectUsers
            return try users.row(table, inTable)
        }
        switch table {
        case .receipts: return try receipts.row(inTable)
        case .awaitingCode: return try awaitingCode.row(inTable)
        case .sessions: return try sessions.row(inTable)
        case .latestSession: return try latestSession.row(inTable)
        case .refreshTokens: return try refreshTokens.row(inTable)
        case .mfaPending: return try mfaPending.row(inTable)
        case .temporaryProofs: return try temporaryProofs.row(inTable)
        case .enterpriseTokens: return try enterpriseTokens.row(inTable)
        case .recaptchaTokens: return try recaptchaTokens.row(inTable)
        case .oobCodes: return try oobCodes.row(inTable)
        case .totpSessions: return try totpSessions.row(inTable)
        case .tenants: return try tenants.row(inTable)
        case .spentAppleTokens: return try spentAppleTokens.row(inTable)
        case .pendingAppleTokens: return try pendingAppleTokens.row(inTable)
        case .revokedAppleCodes: return try revokedAppleCodes.row(inTable)
        case .appleConsents: return try appleConsents.row(inTable)
        case .users, .idByEmail, .idByPhone, .idByAppleSub, .idByProviderID: return StateRow(key: key, text: nil)
        }
    }

    /// Every row the state holds, in every table and tenant: what a fleet's store gets from a state
    /// that holds everything (a journal's, or the records of an older fleet).
    func allRows() throws(IdentityToolkitError) -> [StateRow] {
        var rows: [StateRow] = []
        for table in StateTableName.allCases where !table.isScoped { rows += try self.rows(under: "\(table.rawValue)/") }
        for table in StateTableName.allCases where table.isScoped {
            rows += try projectUsers.allRows(table)
            for tenant in tenantUsers.keys.sorted() { rows += try tenantUsers[tenant]!.allRows(table) }
        }
        return rows
    }

    /// Every row under `prefix` (a table's, or a tenant's users' table's: ``StateTable/prefix``).
    func rows(under prefix: String) throws(IdentityToolkitError) -> [StateRow] {
        let (table, scope, _) = try Self.parse(row: prefix)
        if table.isScoped {
            let users = scope.map { tenantUsers[$0] ?? UserDirectory(tenant: $0) } ?? projectUsers
            return try users.allRows(table)
        }
        switch table {
        case .receipts: return try receipts.allRows()
        case .awaitingCode: return try awaitingCode.allRows()
        case .sessions: return try sessions.allRows()
        case .latestSession: return try latestSession.allRows()
        case .refreshTokens: return try refreshTokens.allRows()
        case .mfaPending: return try mfaPending.allRows()
        case .temporaryProofs: return try temporaryProofs.allRows()
        case .enterpriseTokens: return try enterpriseTokens.allRows()
        case .recaptchaTokens: return try recaptchaTokens.allRows()
        case .oobCodes: return try oobCodes.allRows()
        case .totpSessions: return try totpSessions.allRows()
        case .tenants: return try tenants.allRows()
        case .spentAppleTokens: return try spentAppleTokens.allRows()
        case .pendingAppleTokens: return try pendingAppleTokens.allRows()
        case .revokedAppleCodes: return try revokedAppleCodes.allRows()
        case .appleConsents: return try appleConsents.allRows()
        case .users, .idByEmail, .idByPhone, .idByAppleSub, .idByProviderID: return []
        }
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
        case .users, .idByEmail, .idByPhone, .idByAppleSub, .idByProviderID: break
        }
    }
}
