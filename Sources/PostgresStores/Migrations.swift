import Logging
import PostgresNIO
import Utilities

/// The schema, as numbered steps the program applies itself, in order, each once
/// (`authsim_migrations` lists those applied). Nodes starting together take turns on an advisory
/// lock, so one applies a step and the others find it done. A database with a step this program
/// does not know was migrated by a newer authsim: it is refused, never used half-understood.
///
/// A step, once released, is never edited: a change to the schema is a new step.
enum Migrations {
    struct Step {
        let version: Int
        let name: String
        let statements: [String]
    }

    /// The advisory lock the migrations take (any fixed number; this is "authsim" in ASCII).
    static let lockKey: Int64 = 0x6175_7468_7369_6d00

    static let steps: [Step] = [
        Step(version: 1, name: "the backend's shared records", statements: [
            // One row per project: the fleet's ID-token key. A database holds one project's fleet.
            """
            CREATE TABLE backend_fleet (
                project_id text PRIMARY KEY,
                id_token_key_pem text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            // Every change the backends' rules made, in the one order every node replays.
            """
            CREATE TABLE backend_records (
                position bigint PRIMARY KEY,
                node text NOT NULL,
                written_at timestamptz NOT NULL DEFAULT now(),
                record jsonb NOT NULL
            )
            """,
            // A change's start: the fleet's write turn (an advisory lock held to the transaction's
            // end), then the records after the node's position. A VOLATILE function reads with a
            // new snapshot per statement, so the SELECT sees every change committed before the
            // lock was granted; as one statement with the lock in a subquery it would not.
            """
            CREATE FUNCTION authsim_backend_turn(after_position bigint)
            RETURNS TABLE (record_position bigint, record_text text)
            LANGUAGE plpgsql VOLATILE AS $$
            BEGIN
                PERFORM pg_advisory_xact_lock(\(BackendLock.key));
                RETURN QUERY SELECT r.position, r.record::text FROM backend_records r
                    WHERE r.position > after_position ORDER BY r.position;
            END
            $$
            """,
        ]),
        Step(version: 2, name: "the receivers' delivery log", statements: [
            // Every push a receiver of the fleet answered 200, kept before its answer: its
            // delivery-log line (as deliveries.jsonl has it) and the node that answered.
            """
            CREATE TABLE receiver_deliveries (
                id bigserial PRIMARY KEY,
                node text NOT NULL,
                kept_at timestamptz NOT NULL DEFAULT now(),
                device_token text NOT NULL,
                apns_id text NOT NULL,
                line jsonb NOT NULL
            )
            """,
            "CREATE INDEX receiver_deliveries_device_token ON receiver_deliveries (device_token, id)",
        ]),
        Step(version: 3, name: "the receivers' device registry and rejection log", statements: [
            // Each token as it is now (device NULL once removed, so copies learn of the removal),
            // with the version of its last change. Changes take a lock (DeviceRegistryLock), so
            // versions commit in order and a copy that read up to version N has every change up to N.
            "CREATE SEQUENCE receiver_device_versions",
            """
            CREATE TABLE receiver_devices (
                environment text NOT NULL,
                token text NOT NULL,
                device jsonb,
                version bigint NOT NULL,
                node text NOT NULL,
                changed_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (environment, token)
            )
            """,
            "CREATE INDEX receiver_devices_version ON receiver_devices (version)",
            // Every push a receiver of the fleet refused for a reason of the push's own (as
            // rejections.jsonl has them), kept before its answer.
            """
            CREATE TABLE receiver_rejections (
                id bigserial PRIMARY KEY,
                node text NOT NULL,
                kept_at timestamptz NOT NULL DEFAULT now(),
                device_token text NOT NULL,
                apns_id text NOT NULL,
                entry jsonb NOT NULL
            )
            """,
            "CREATE INDEX receiver_rejections_device_token ON receiver_rejections (device_token, id)",
        ]),
        Step(version: 4, name: "the backends' events, for every node's inspector", statements: [
            // Each event a backend node made (StoredBackendEvent: the event and its sign-in, as
            // Swift codes them; rows of older nodes the bare BackendEvent), with the fleet
            // position the node had reached: inspectors sort a sign-in's steps by it.
            """
            CREATE TABLE backend_events (
                id bigserial PRIMARY KEY,
                node text NOT NULL,
                position bigint NOT NULL,
                at timestamptz NOT NULL,
                event jsonb NOT NULL
            )
            """,
        ]),
        Step(version: 5, name: "the simulated Apple's key, the fleet's", statements: [
            "ALTER TABLE backend_fleet ADD COLUMN apple_key_pem text",
        ]),
        Step(version: 6, name: "the receivers' fault plan, the fleet's", statements: [
            // The plan's version is drawn from the registry's sequence under the registry's lock,
            // so one version orders both and an accepted batch checks both (PostgresDeliveryLog).
            """
            CREATE TABLE receiver_fault_plan (
                only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
                version bigint NOT NULL,
                node text NOT NULL,
                changed_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            // The plan's rules in order (as push-receiver --fault writes them, without count=),
            // each counted rule with its uses left: a use is claimed with one conditional UPDATE.
            // A new plan replaces the rows, so a claim made on an older plan finds none.
            """
            CREATE TABLE receiver_fault_rules (
                plan_version bigint NOT NULL,
                position integer NOT NULL,
                rule text NOT NULL,
                uses_left integer CHECK (uses_left >= 0),
                PRIMARY KEY (plan_version, position)
            )
            """,
        ]),
        Step(version: 7, name: "the devices connected to each receiver's gateway, and the pushes handed between receivers", statements: [
            // A device holding streams open on a node's gateway (a node's rows go when it starts again).
            """
            CREATE TABLE receiver_device_links (
                environment text NOT NULL,
                token text NOT NULL,
                node text NOT NULL,
                streams integer NOT NULL CHECK (streams > 0),
                PRIMARY KEY (environment, token, node)
            )
            """,
            // A push one receiver accepted for a device connected to another's gateway, until that one takes it.
            """
            CREATE TABLE receiver_forwards (
                id bigserial PRIMARY KEY,
                node text NOT NULL,
                kept_at timestamptz NOT NULL DEFAULT now(),
                push jsonb NOT NULL
            )
            """,
            "CREATE INDEX receiver_forwards_node ON receiver_forwards (node, id)",
        ]),
        Step(version: 8, name: "snapshots of the backend's state, so that the records before one can go", statements: [
            // The state as of `position` (the records that rebuild it, as a compacted journal holds
            // them); the records up to `position` are deleted in the same transaction.
            """
            CREATE TABLE backend_snapshots (
                position bigint PRIMARY KEY,
                node text NOT NULL,
                taken_at timestamptz NOT NULL DEFAULT now(),
                records jsonb NOT NULL
            )
            """,
            // The records after a position, in one statement (one snapshot of the database): a
            // position from before the latest snapshot gets the snapshot first (from_snapshot: a
            // header row without text, then the records that rebuild the state from nothing),
            // then the records after it.
            """
            CREATE FUNCTION authsim_backend_records(after_position bigint)
            RETURNS TABLE (record_position bigint, record_text text, from_snapshot boolean)
            LANGUAGE sql STABLE AS $$
                WITH snap AS (SELECT position, records FROM backend_snapshots WHERE position > after_position ORDER BY position DESC LIMIT 1)
                SELECT p, t, f FROM (
                    -- A header row (no text), so that even an empty snapshot says the state starts again.
                    SELECT s.position, NULL::text, true, 0::bigint FROM snap s
                    UNION ALL
                    SELECT s.position, e.value::text, true, e.n FROM snap s, jsonb_array_elements(s.records) WITH ORDINALITY AS e(value, n)
                    UNION ALL
                    SELECT r.position, r.record::text, false, 0::bigint FROM backend_records r
                        WHERE r.position > coalesce((SELECT position FROM snap), after_position)
                ) AS everything(p, t, f, n)
                ORDER BY f DESC, p, n
            $$
            """,
            // A change's start, as authsim_backend_turn, reading through the snapshot.
            """
            CREATE FUNCTION authsim_backend_turn_from(after_position bigint)
            RETURNS TABLE (record_position bigint, record_text text, from_snapshot boolean)
            LANGUAGE plpgsql VOLATILE AS $$
            BEGIN
                PERFORM pg_advisory_xact_lock(\(BackendLock.key));
                RETURN QUERY SELECT * FROM authsim_backend_records(after_position);
            END
            $$
            """,
        ]),
        Step(version: 9, name: "the receivers' logs kept as their lines, as text", statements: [
            // A receiver keeps its pushes before answering: PostgreSQL parsing each line into
            // jsonb cost about a fifth of a kept push's time (Benchmarks/run.sh fleet, 2 cores),
            // and nothing queries inside a line. Readers that add the node parse the line then.
            "ALTER TABLE receiver_deliveries ALTER COLUMN line TYPE text USING line::text",
            "ALTER TABLE receiver_rejections ALTER COLUMN entry TYPE text USING entry::text",
        ]),
        Step(version: 10, name: "which authsim applied each step, and the formats of the stored records", statements: [
            // Who migrated the database, for the refusal a node of an older authsim gives.
            "ALTER TABLE authsim_migrations ADD COLUMN applied_by text",
            // The format of each kind of record the nodes read and write (``StoreFormats``), and
            // the authsim that last set it: a node refuses a database whose records are newer than
            // it reads.
            """
            CREATE TABLE authsim_formats (
                format text PRIMARY KEY,
                version integer NOT NULL,
                written_by text NOT NULL,
                set_at timestamptz NOT NULL DEFAULT now()
            )
            """,
        ]),
        Step(version: 11, name: "the backend's state as rows, each changed under its own lock", statements: [
            // Each row of the backend's state (StateRow: a receipt, a session, a user, an index of
            // users by number, …) as JSON, with the version of its last change (drawn from one
            // sequence per commit) and the node that made it. The key's C collation lets a table's or a tenant's rows be
            // read as one range of the primary key.
            "CREATE SEQUENCE backend_row_versions",
            """
            CREATE TABLE backend_rows (
                key text COLLATE "C" PRIMARY KEY,
                version bigint NOT NULL,
                value text NOT NULL,
                expires_at timestamptz,
                node text NOT NULL
            )
            """,
            "CREATE INDEX backend_rows_expires_at ON backend_rows (expires_at) WHERE expires_at IS NOT NULL",
            // The rows with these keys and every row under these prefixes, as committed now (no
            // lock): what a batch loads before its rules run again. (Every comparison with a key is
            // in the key's collation, "C": in the database's, the primary key's index is not used.)
            """
            CREATE FUNCTION authsim_backend_rows(keys text[], prefixes text[])
            RETURNS TABLE (row_key text, row_version bigint, row_value text)
            LANGUAGE sql STABLE AS $$
                SELECT r.key, r.version, r.value FROM unnest(keys) AS k(key) JOIN backend_rows r ON r.key = k.key COLLATE "C"
                UNION
                SELECT r.key, r.version, r.value FROM unnest(prefixes) AS p(prefix)
                    JOIN backend_rows r ON r.key >= p.prefix COLLATE "C" AND r.key < (p.prefix || chr(1114111)) COLLATE "C"
            $$
            """,
            // A batch's commit, in one statement (its own transaction):
            // 1. Locks, in one order (by lock ID, so two commits never wait for each other in a
            //    circle): each row read, shared; each row written, exclusive; each prefix read
            //    whole, exclusive; the prefix of each row written, shared (so no row appears under
            //    a prefix while a commit that read it whole checks it).
            // 2. Returns the rows that are no longer as the batch read them (version 0 for a row
            //    gone; a row under a prefix read whole that the batch did not read), and writes
            //    nothing, if there are any: the batch loads them and its rules run again.
            // 3. Otherwise deletes the rows to delete and writes the others with a new version (and
            //    when they may go: seconds since 1970, 0 for never), and returns that version alone
            //    (key NULL): the commit's place in the fleet's order.
            """
            CREATE FUNCTION authsim_backend_commit(read_keys text[], read_versions bigint[], whole text[],
                                                   write_keys text[], write_values text[], write_expiry double precision[],
                                                   delete_keys text[], write_prefixes text[], writer text)
            RETURNS TABLE (row_key text, row_version bigint, row_value text)
            LANGUAGE plpgsql VOLATILE AS $$
            DECLARE
                wanted record;
                new_version bigint;
            BEGIN
                FOR wanted IN
                    SELECT lock_id, bool_or(exclusive) AS exclusive FROM (
                        SELECT hashtextextended(k, 0) AS lock_id, false AS exclusive FROM unnest(read_keys) AS k
                        UNION ALL SELECT hashtextextended(k, 0), true FROM unnest(write_keys) AS k
                        UNION ALL SELECT hashtextextended(k, 0), true FROM unnest(delete_keys) AS k
                        UNION ALL SELECT hashtextextended(p, 0), true FROM unnest(whole) AS p
                        UNION ALL SELECT hashtextextended(p, 0), false FROM unnest(write_prefixes) AS p
                    ) AS locks GROUP BY lock_id ORDER BY lock_id
                LOOP
                    IF wanted.exclusive THEN
                        PERFORM pg_advisory_xact_lock(wanted.lock_id);
                    ELSE
                        PERFORM pg_advisory_xact_lock_shared(wanted.lock_id);
                    END IF;
                END LOOP;
                RETURN QUERY
                    SELECT h.k, coalesce(r.version, 0), r.value
                        FROM unnest(read_keys, read_versions) AS h(k, v) LEFT JOIN backend_rows r ON r.key = h.k COLLATE "C"
                        WHERE coalesce(r.version, 0) <> h.v
                    UNION ALL
                    SELECT r.key, r.version, r.value FROM unnest(whole) AS p(prefix)
                        JOIN backend_rows r ON r.key >= p.prefix COLLATE "C" AND r.key < (p.prefix || chr(1114111)) COLLATE "C"
                        WHERE NOT (r.key = ANY(read_keys));
                IF FOUND THEN
                    RETURN;
                END IF;
                new_version := nextval('backend_row_versions');
                DELETE FROM backend_rows b USING unnest(delete_keys) AS d(k) WHERE b.key = d.k COLLATE "C";
                INSERT INTO backend_rows (key, version, value, expires_at, node)
                    SELECT w.k, new_version, w.v, CASE WHEN w.e > 0 THEN to_timestamp(w.e) END, writer
                    FROM unnest(write_keys, write_values, write_expiry) AS w(k, v, e)
                    ON CONFLICT (key) DO UPDATE SET version = EXCLUDED.version, value = EXCLUDED.value, expires_at = EXCLUDED.expires_at,
                        node = EXCLUDED.node;
                RETURN QUERY SELECT NULL::text, new_version, NULL::text;
            END
            $$
            """,
        ]),
        Step(version: 12, name: "the receivers' pushes kept a batch to a row", statements: [
            // Each batch of pushes a receiver answered 200 (a connection's read), kept before the
            // answers: one row of its delivery-log lines, newline-separated, in order, and the
            // device tokens they name (each once: the index finds a device's batches). A row per
            // push cost PostgreSQL a heap tuple, two index entries and a WAL record each: most of
            // a kept push's CPU (Benchmarks/run.sh fleet-pushes). The lines are long and read
            // rarely: stored out of line, not compressed (compressing them cost more than it saved).
            """
            CREATE TABLE receiver_delivery_batches (
                id bigserial PRIMARY KEY,
                node text NOT NULL,
                kept_at timestamptz NOT NULL DEFAULT now(),
                device_tokens text[] NOT NULL,
                lines text NOT NULL
            )
            """,
            "ALTER TABLE receiver_delivery_batches ALTER COLUMN lines SET STORAGE EXTERNAL",
            "CREATE INDEX receiver_delivery_batches_device_tokens ON receiver_delivery_batches USING gin (device_tokens)",
            """
            INSERT INTO receiver_delivery_batches (node, kept_at, device_tokens, lines)
                SELECT node, kept_at, ARRAY[device_token], line FROM receiver_deliveries ORDER BY id
            """,
            "DROP TABLE receiver_deliveries",
            // The pushes one to a row, as the table was: for queries by hand and older scripts.
            """
            CREATE VIEW receiver_deliveries AS
                SELECT b.id AS batch, l.position, b.node, b.kept_at, l.line::json->>'device-token' AS device_token,
                       l.line::json->>'apns-id' AS apns_id, l.line
                FROM receiver_delivery_batches b
                    CROSS JOIN LATERAL unnest(string_to_array(b.lines, E'\\n')) WITH ORDINALITY AS l(line, position)
            """,
        ]),
        Step(version: 13, name: "a receiver's batches kept by a function, together, their lines compressed with lz4", statements: [
            // Batches of pushes (an event loop's, gathered while its last keep ran), each kept as a
            // row unless the fleet's device registry or fault plan changed after its version (-1:
            // a receiver whose registry is not the fleet's, kept): which were, in order. Their
            // tokens come space-separated, a string each (arrays of arrays must be rectangular).
            // As one statement sent with each batch, PostgreSQL parsed and planned it every time (a
            // fifth of its CPU for a batch); a PL/pgSQL function's statements are planned once per
            // connection.
            """
            CREATE FUNCTION authsim_keep_deliveries(batch_node text, batch_tokens text[], batch_lines text[], registry_versions bigint[])
            RETURNS boolean[]
            LANGUAGE plpgsql VOLATILE AS $$
            DECLARE
                newest bigint := greatest((SELECT max(version) FROM receiver_devices), (SELECT max(version) FROM receiver_fault_plan));
                kept boolean[];
            BEGIN
                kept := ARRAY(SELECT v < 0 OR newest IS NULL OR newest <= v FROM unnest(registry_versions) WITH ORDINALITY AS r(v, n) ORDER BY n);
                INSERT INTO receiver_delivery_batches (node, device_tokens, lines)
                    SELECT batch_node, string_to_array(b.tokens, ' '), b.lines
                    FROM unnest(batch_tokens, batch_lines, kept) WITH ORDINALITY AS b(tokens, lines, keep, n)
                    WHERE b.keep ORDER BY b.n;
                RETURN kept;
            END
            $$
            """,
            // The lines compressed with lz4 where the server has it (PostgreSQL 14 and later, built
            // with lz4, as Debian's and the official images are): a fifth of the pages and of the
            // WAL, and PostgreSQL's COPY of the same rows a third faster. pglz cost more than it
            // saved; without lz4 the lines stay uncompressed. Rows kept before stay as they are.
            """
            DO $$
            BEGIN
                IF current_setting('server_version_num')::integer >= 140000 THEN
                    ALTER TABLE receiver_delivery_batches ALTER COLUMN lines SET STORAGE EXTENDED, ALTER COLUMN lines SET COMPRESSION lz4;
                END IF;
            EXCEPTION WHEN feature_not_supported THEN
                NULL;
            END
            $$
            """,
        ]),
    ]

    static var latest: Int { steps.last?.version ?? 0 }

    /// Brings the database to ``latest``; refuses one that is newer.
    static func run(on connection: PostgresConnection, address: String, logger: Logger) async throws {
        try await connection.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS authsim_migrations (
                    version integer PRIMARY KEY,
                    name text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """, logger: logger)
            var applied: Int = 0
            for try await version in try await connection.query("SELECT coalesce(max(version), 0) FROM authsim_migrations", logger: logger)
                .decode(Int.self) {
                applied = version
            }
            guard applied <= latest else {
                var by = "a newer authsim"
                let writers = try await connection.query(
                    "SELECT coalesce(applied_by, '') FROM authsim_migrations WHERE version > \(latest) ORDER BY version DESC LIMIT 1", logger: logger)
                for try await writer in writers.decode(String.self) where !writer.isEmpty { by = "authsim \(writer)" }
                throw SharedStoreError(.schemaTooNew, """
                    the database has schema version \(applied), and this authsim (\(AuthsimVersion.current)) knows up to \(latest): \
                    it was migrated by \(by), a newer authsim. Run that version on every node (docs/fleet.md, upgrading), \
                    or give this one its own database.
                    """)
            }
            for step in steps where step.version > applied {
                for statement in step.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query("INSERT INTO authsim_migrations (version, name) VALUES (\(step.version), \(step.name))", logger: logger)
                logger.info("store migrated", metadata: ["store": "\(address)", "version": "\(step.version)", "step": "\(step.name)"])
            }
            if applied < latest {
                try await connection.query("UPDATE authsim_migrations SET applied_by = \(AuthsimVersion.current) WHERE version > \(applied)", logger: logger)
            }
            try await StoreFormats.check(on: connection, logger: logger)
        }
    }
}

/// The formats of the records a fleet's nodes read and write in the database (what
/// ``StateFormat`` is for the files): each kind's version is in `authsim_formats`, with the authsim
/// that set it. A node of a newer format raises the row (migrating the records first, when a
/// version comes that changes them); a node of an older one refuses the database, naming both
/// authsims. So a fleet upgraded node by node either shares its records' formats or stops the
/// node that cannot read them (docs/fleet.md).
enum StoreFormats {
    /// The backend's state (2: rows of the state's tables, as JSON, in `backend_rows`; 1: every
    /// change as a ``BackendRecord``, replayed by every node, read once to make the rows), the
    /// receivers' delivery and rejection lines (as the files' lines).
    static let all = [
        StateFormat(kind: "backend records", current: 2),
        StateFormat(kind: "receiver log lines", current: 1),
    ]

    static func check(on connection: PostgresConnection, logger: Logger) async throws {
        var stored: [String: (version: Int, writtenBy: String)] = [:]
        for try await (format, version, writtenBy) in try await connection.query(
            "SELECT format, version, written_by FROM authsim_formats", logger: logger).decode((String, Int, String).self) {
            stored[format] = (version, writtenBy)
        }
        for format in all {
            if let row = stored[format.kind] {
                do { _ = try format.version(of: FormatStamp(format: format.kind, version: row.version, writtenBy: row.writtenBy), in: "the database") } catch {
                    throw SharedStoreError(.schemaTooNew, "\(error.message) (every node of a fleet must read its records: docs/fleet.md, upgrading)")
                }
                if row.version == format.current { continue }
            }
            try await connection.query("""
                INSERT INTO authsim_formats (format, version, written_by) VALUES (\(format.kind), \(format.current), \(AuthsimVersion.current))
                ON CONFLICT (format) DO UPDATE SET version = excluded.version, written_by = excluded.written_by, set_at = now()
                """, logger: logger)
        }
    }
}

/// The turn for changes to the receivers' device registry, and the channel they are announced on.
enum DeviceRegistryLock {
    static let key: Int64 = 0x6175_7468_6465_7673
    static let channel = "authsim_receiver_devices"
}

/// The channel on which device links and forwarded pushes are announced: `links`, or
/// `forward:NODE` for pushes handed to NODE.
enum DeviceLinksChannel {
    static let name = "authsim_receiver_links"
    static let linksChanged = "links"
    static func forwarded(to node: String) -> String { "forward:\(node)" }
}

/// The fleet's write turn for the backend's records.
enum BackendLock {
    static let key: Int64 = 0x6175_7468_6261_636b
}
