#if PostgreSQL
import PostgresNIO
import Synchronization
import ValueStore

/// A validated table name: a plain or schema-qualified identifier, folded to lower case as the
/// server folds an unquoted name, quoted for SQL, and the notification channel derived from it.
struct PostgresTableName: Sendable, Hashable {
    /// The name as given: `app_values` or `tenant.app_values`.
    let name: String
    /// Each part lower-cased and in double quotes: `"tenant"."app_values"`, the table the server
    /// means by `Tenant.App_Values` written unquoted.
    let quoted: String
    /// The table part, lower-cased: `app_values`.
    let relation: String
    /// The channel the table's writes notify on: at most 63 bytes, a hash for long names.
    let channel: String

    /// Schemas a value table never lives in. Every other `pg_` schema is the server's too: the
    /// prefix is reserved, so no app can create one.
    static let systemSchemas: Set<String> = ["pg_catalog", "information_schema", "pg_toast"]

    /// Whether `schema` (lower-cased) is a session's temporary schema: `pg_temp`, which names the
    /// current session's, or `pg_temp_N` and `pg_toast_temp_N`, one backend's.
    static func isTemporary(schema: String) -> Bool {
        schema == "pg_temp" || schema.hasPrefix("pg_temp_") || schema.hasPrefix("pg_toast_temp_")
    }

    /// Validates `name`: one or two parts separated by a dot, each made of ASCII letters, digits
    /// and underscores, not starting with a digit, at most 63 bytes, and not in a system or
    /// temporary schema.
    init(_ name: String) throws {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy(Self.isIdentifier) else {
            throw ValueStoreError(
                .invalidConfiguration,
                store: "PostgreSQL table",
                reason:
                    "the table name is not a plain or schema-qualified identifier (letters, digits and "
                    + "underscores, not starting with a digit, at most 63 bytes a part)"
            )
        }
        let folded = parts.map { $0.lowercased() }
        if folded.count == 2, Self.isTemporary(schema: folded[0]) {
            throw ValueStoreError(
                .invalidConfiguration, store: "PostgreSQL table '\(name)'",
                reason:
                    "the schema '\(folded[0])' is a session's temporary schema: its rows would live in one pooled "
                    + "connection and vanish with it; put the table in a schema of the app's")
        }
        if folded.count == 2, Self.systemSchemas.contains(folded[0]) || folded[0].hasPrefix("pg_") {
            throw ValueStoreError(
                .invalidConfiguration, store: "PostgreSQL table '\(name)'",
                reason: "the schema '\(folded[0])' is the server's own; put the table in a schema of the app's")
        }
        self.init(name: name, parts: folded)
    }

    private init(name: String, parts: [String]) {
        self.name = name
        relation = parts.last!
        quoted = parts.map { "\"\($0)\"" }.joined(separator: ".")
        let channel = "valuestore:\(name)"
        self.channel =
            channel.utf8.count <= 63 ? channel : "valuestore:\(name.prefix(30)):\(PostgresKey.hash(name))"
    }

    /// The table the server found for a name: its schema and table, whatever the spelling and
    /// the `search_path`. A table in `public` is named by its table alone, so its channel is the
    /// one the first release used for the plain name.
    static func resolved(schema: String, table: String) -> PostgresTableName {
        PostgresTableName(
            name: schema == "public" ? table : "\(schema).\(table)",
            parts: [schema, table])
    }

    private static func isIdentifier(_ part: Substring) -> Bool {
        guard let first = part.utf8.first, part.utf8.count <= 63 else { return false }
        let isLetter = { (byte: UInt8) in (65...90).contains(byte) || (97...122).contains(byte) || byte == 95 }
        let isDigit = { (byte: UInt8) in (48...57).contains(byte) }
        return isLetter(first) && part.utf8.allSatisfy { isLetter($0) || isDigit($0) }
    }
}

/// The tables this process has resolved, by client and spelling: each spelling is looked up on
/// the server once (at `createIfNeeded()` or first use), so the two spellings of one table share
/// one channel and one turn per key.
enum PostgresResolvedTables {
    struct Spelling: Hashable {
        let client: ObjectIdentifier
        let name: String
    }

    /// A resolved table and the client it was resolved through, held weakly: an identifier a
    /// later client reuses never finds another client's answer.
    private struct Entry {
        weak var client: PostgresClient?
        let table: PostgresTableName
    }

    private static let resolved = Mutex<[Spelling: Entry]>([:])

    /// How long an answer that no such table exists is trusted: calls in a row on a missing
    /// table share one look-up per window instead of borrowing a connection each, which cost
    /// memory with each call (postgres-nio's pool keeps a timer for each connection it takes
    /// back, for 30 seconds). `createIfNeeded()` in this process forgets the answer at once.
    static let missingFor = Duration.milliseconds(100)

    /// A spelling the server found no table for, with the error that said so.
    private struct Missing {
        weak var client: PostgresClient?
        let error: ValueStoreError
        let at: ContinuousClock.Instant
    }

    private static let missing = Mutex<[Spelling: Missing]>([:])

    /// The error of a look-up of `spelling` that found no table within ``missingFor``.
    static func recentlyMissing(_ spelling: Spelling, client: PostgresClient) -> ValueStoreError? {
        missing.withLock { missing in
            guard let entry = missing[spelling], entry.client === client, ContinuousClock.now - entry.at < missingFor
            else { return nil }
            return entry.error
        }
    }

    /// The server found no table for `spelling`: `error` says so.
    static func rememberMissing(_ error: ValueStoreError, for spelling: Spelling, client: PostgresClient) {
        let now = ContinuousClock.now
        missing.withLock { missing in
            missing = missing.filter { $0.value.client != nil && now - $0.value.at < missingFor }
            missing[spelling] = Missing(client: client, error: error, at: now)
        }
    }

    static func lookUp(_ spelling: Spelling, client: PostgresClient) -> PostgresTableName? {
        resolved.withLock { resolved in
            guard let entry = resolved[spelling], entry.client === client else { return nil }
            return entry.table
        }
    }

    static func remember(_ table: PostgresTableName, for spelling: Spelling, client: PostgresClient) {
        resolved.withLock { resolved in
            resolved = resolved.filter { $0.value.client != nil }
            resolved[spelling] = Entry(client: client, table: table)
        }
        missing.withLock { _ = $0.removeValue(forKey: spelling) }
    }
}

/// How a key appears in a change notification: itself when short, a hash when long, so the
/// payload stays far below PostgreSQL's 8,000-byte limit for any key.
enum PostgresKey {
    /// Keys up to this many UTF-8 bytes travel as they are.
    static let longestPlain = 1_000

    /// Keys up to this many UTF-8 bytes are quoted whole in error messages.
    static let longestQuoted = 200

    /// `k:` and the key, or `h:` and a 64-bit hash of its bytes. Two long keys with the same hash
    /// only cost each other's streams a spurious reload.
    static func identifier(_ key: String) -> String {
        key.utf8.count <= longestPlain ? "k:\(key)" : "h:\(hash(key))"
    }

    /// The key as error messages quote it: whole up to 200 bytes, otherwise its first 100 bytes
    /// (whole characters), its length and its hash, so a message stays under 1 KB for any key.
    static func quoted(_ key: String) -> String {
        guard key.utf8.count > longestQuoted else { return "'\(key)'" }
        var prefix = ""
        var bytes = 0
        for character in key {
            bytes += character.utf8.count
            guard bytes <= 100 else { break }
            prefix.append(character)
        }
        return "'\(prefix)…' (\(key.utf8.count) bytes, hash \(hash(key)))"
    }

    /// Throws ``/ValueStore/ValueStoreError/Code/invalidConfiguration`` for a key PostgreSQL cannot
    /// store: `text` holds no NUL character.
    static func validate(_ key: String, store: @autoclosure () -> String) throws {
        if key.utf8.contains(0) {
            throw ValueStoreError(
                .invalidConfiguration, store: store(),
                reason: "the key contains a NUL character, which PostgreSQL text cannot hold; nothing was sent")
        }
    }

    /// FNV-1a over the UTF-8 bytes, as 16 hexadecimal digits.
    static func hash(_ text: some StringProtocol) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
#endif
