import IdentityToolkitAPI

/// One of the backend state's tables by name: the first part of its rows' keys in a fleet's store
/// (``StateTable/rowKey(_:)``).
enum StateTableName: String, CaseIterable, Sendable {
    case receipts = "receipt", awaitingCode = "awaiting", sessions = "session", latestSession = "latest"
    case refreshTokens = "refresh", mfaPending = "mfa", temporaryProofs = "proof", enterpriseTokens = "enterprise"
    case recaptchaTokens = "recaptcha", oobCodes = "oob", totpSessions = "totp", tenants = "tenant"
    case spentAppleTokens = "appleSpent", pendingAppleTokens = "applePending", revokedAppleCodes = "appleRevoked"
    case appleConsents = "appleConsent"
    case users = "user", idByEmail = "email", idByPhone = "phone", idByAppleSub = "appleSub", idByProviderID = "provider"
    /// A fleet's alone: its SMS outbox, its silent pushes' outcomes, its project config (a backend of
    /// its own keeps the first two as lists, and its config in memory).
    case sms = "sms", silentPushes = "silentPush", sharedConfig = "config"
}

/// A key of a ``StateTable``, as it names a row.
protocol StateTableKey: Hashable {
    var rowKey: String { get }
}

extension String: StateTableKey {
    var rowKey: String { self }
}

extension SignInID: StateTableKey {
    var rowKey: String { rawValue }
}

/// What a run of the rules read and did not have (a fleet node's state holds only what its batch
/// loaded): the rows and parts of tables to load before the rules run again. Shared by the tables
/// of one state (a class, so that a table's getter can note a read); nil outside a fleet, where the
/// state holds everything and nothing is noted. Sendable as the state is: a state and its reads
/// are changed by one caller at a time (the backend's actor).
///
/// A row is named by its key in the store: its table's prefix (``StateTable/prefix``: the table's
/// name, and the scope of a tenant's users), then its key in the table. A table read whole (counted,
/// listed, filtered) is named by its prefix.
final class StateReads: @unchecked Sendable {
    /// The rows the state holds (loaded, or found absent in the store).
    private(set) var loaded: Set<String> = []
    /// The prefixes the state holds whole.
    private(set) var loadedWhole: Set<String> = []
    /// Rows read and not held.
    private(set) var missing: Set<String> = []
    /// Prefixes read whole and not held.
    private(set) var missingWhole: Set<String> = []
    /// Prefixes read whole loosely (``StateTable/looseRows``) and not loaded; those loaded.
    private(set) var missingLoose: Set<String> = []
    private(set) var loadedLoose: Set<String> = []

    func read(_ prefix: String, _ key: String) {
        guard !loadedWhole.contains(prefix) else { return }
        let row = prefix + key
        if !loaded.contains(row) { missing.insert(row) }
    }

    func readWhole(_ prefix: String) {
        if !loadedWhole.contains(prefix) { missingWhole.insert(prefix) }
    }

    func readLoosely(_ prefix: String) {
        if !loadedWhole.contains(prefix) && !loadedLoose.contains(prefix) { missingLoose.insert(prefix) }
    }

    /// The rows under `prefixes` were loaded loosely: not held (a read of one by its key loads it).
    func loadedLoosely(_ prefixes: some Sequence<String>) {
        loadedLoose.formUnion(prefixes)
    }

    /// `rows`, and every row under `prefixes`, are held from now on.
    func hold(rows: some Sequence<String>, whole prefixes: some Sequence<String>) {
        loaded.formUnion(rows)
        loadedWhole.formUnion(prefixes)
    }

    /// Forgets what was missed (before the rules run again).
    func clearMisses() {
        missing = []
        missingWhole = []
        missingLoose = []
    }

    var hasMisses: Bool { !missing.isEmpty || !missingWhole.isEmpty || !missingLoose.isEmpty }
}

/// One table of the backend's state: a dictionary that, in a fleet node's state, notes each read
/// of a row it does not hold and each read of the whole table (``StateReads``), so that the node
/// loads them from the fleet's store and runs the rules again, and keeps which rows changed
/// (``changed``): the rows the node writes. Outside a fleet it is the dictionary alone.
struct StateTable<Key: StateTableKey, Value>: Sequence {
    private(set) var storage: [Key: Value] = [:]
    /// Its rows' keys in a fleet's store start with this: the table's name and a slash, and for a
    /// tenant's users the tenant's ID and a slash (the project's own: an empty ID).
    let prefix: String
    let reads: StateReads?
    /// The keys set or removed since ``forgetChanges()``, when `reads` is set.
    private(set) var changed: Set<Key> = []

    init(_ name: StateTableName, scope: String? = nil, reads: StateReads? = nil) {
        self.prefix = "\(name.rawValue)/" + (scope.map { "\($0)/" } ?? "")
        self.reads = reads
    }

    /// The row key of `key` in a fleet's store.
    func rowKey(_ key: Key) -> String { prefix + key.rowKey }

    subscript(key: Key) -> Value? {
        get {
            reads?.read(prefix, key.rowKey)
            return storage[key]
        }
        _modify {
            if let reads {
                reads.read(prefix, key.rowKey)
                changed.insert(key)
            }
            yield &storage[key]
        }
        set {
            if reads != nil { changed.insert(key) }
            storage[key] = newValue
        }
    }

    subscript(key: Key, default value: @autoclosure () -> Value) -> Value {
        get { self[key] ?? value() }
        _modify {
            if let reads {
                reads.read(prefix, key.rowKey)
                changed.insert(key)
            }
            yield &storage[key, default: value()]
        }
    }

    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        if let reads {
            reads.read(prefix, key.rowKey)
            changed.insert(key)
        }
        return storage.removeValue(forKey: key)
    }

    /// Whether `key` has a row (a read of it).
    func contains(_ key: Key) -> Bool { self[key] != nil }

    // MARK: The whole table (a read of every row)

    func makeIterator() -> Dictionary<Key, Value>.Iterator {
        reads?.readWhole(prefix)
        return storage.makeIterator()
    }

    var count: Int {
        reads?.readWhole(prefix)
        return storage.count
    }

    var isEmpty: Bool { count == 0 }

    var keys: Dictionary<Key, Value>.Keys {
        reads?.readWhole(prefix)
        return storage.keys
    }

    var values: Dictionary<Key, Value>.Values {
        reads?.readWhole(prefix)
        return storage.values
    }

    /// Every row, for a rule whose outcome does not hang on them (which sign-in a token's events
    /// belong to): in a fleet node's state they are loaded as they are now, and the batch's commit
    /// does not check them, so it waits for no other node's rows of the table, nor they for it.
    var looseRows: Dictionary<Key, Value> {
        reads?.readLoosely(prefix)
        return storage
    }

    /// The rows `isIncluded` keeps (the others removed, changed): a new dictionary sized to what is
    /// left, where removing in place would keep the capacity of the busiest moment for good.
    func filter(_ isIncluded: (Dictionary<Key, Value>.Element) throws -> Bool) rethrows -> StateTable {
        reads?.readWhole(prefix)
        var kept = self
        kept.storage = try storage.filter(isIncluded)
        if reads != nil, kept.storage.count != storage.count {
            for key in storage.keys where kept.storage[key] == nil { kept.changed.insert(key) }
        }
        return kept
    }

    /// Every row removed (changed).
    mutating func removeAll() {
        self = filter { _ in false }
    }

    // MARK: Rows loaded from a fleet's store

    /// Puts a row read from the store in (nil: the store has none): not a change.
    mutating func load(_ key: Key, _ value: Value?) {
        storage[key] = value
    }

    /// The changes so far are written: none from here on.
    mutating func forgetChanges() {
        changed = []
    }
}

extension StateTable where Value == Bool {
    /// Adds `key` (a set's member, as a row).
    mutating func insert(_ key: Key) { self[key] = true }
    mutating func remove(_ key: Key) { self[key] = nil }
}

extension StateTable: Sendable where Key: Sendable, Value: Sendable {}
