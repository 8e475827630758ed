#if PostgreSQL
import Foundation
import PostgresNIO
import ValueStore
import ValueStoreSync

// The two requests (a file each, `+Push` and `+Pull`, and the write a push ends with in `+Write`),
// and what they share: the rows a request involves are read in one statement, `SyncServerRules`
// answers as it does in memory, and what changed is written back in one statement. Every
// statement is prepared once per connection, so a push costs two round trips (a read, then a
// write that applies only if the account's row is still the one read) and a pull one (its read
// records the puller's progress).
extension PostgresSyncTable {
    /// Runs `body` in a transaction on a borrowed connection, with the bounds, cancellation and
    /// error classification of every value-table operation; rolls back if it throws.
    func transaction<Result: Sendable>(
        step: PostgresStep,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await records.connected(step: step, store: label) { connection in
            try await connection.run("BEGIN")
            do {
                let result = try await body(connection)
                try await connection.run("COMMIT")
                return result
            } catch {
                do {
                    try await connection.run("ROLLBACK")
                } catch {
                    // A connection that cannot roll back must not go back to the pool mid-transaction.
                    try? await connection.close()
                }
                throw error
            }
        }
    }

    /// Pokes the account's replicas at commit: a notification on the records table's channel
    /// (its resolved identity's, as every spelling of the name hears), which every process's
    /// listener of the table hears (none skips it as its own).
    func poke(account: String, channel: String, on connection: PostgresConnection) async throws {
        let payload = PostgresChangeNotice.syncPayload(account: account)
        try await connection.run("SELECT pg_notify(\(channel)::text, \(payload)::text)")
    }

    /// The records table the server finds for the name, looked up once per process and
    /// spelling: its channel carries the pokes, whichever spelling a process uses.
    func resolvedRecords() async throws -> PostgresTableName {
        if let known = PostgresResolvedTables.lookUp(records.spelling, client: client) {
            return known
        }
        let name = records.table.quoted
        let found = try await transaction(step: .read) { connection in
            var found: (String, String)?
            let rows = try await connection.query(
                """
                SELECT n.nspname::text, c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE c.oid = to_regclass(\(name)::text)
                """, logger: PostgresValueTable.logger)
            for try await row in rows.decode((String, String).self) {
                found = row
            }
            return found
        }
        guard let (schema, relation) = found else {
            throw ValueStoreError(
                .invalidConfiguration, store: label,
                reason: "the sync tables '\(self.name)_*' do not exist; call createIfNeeded() first")
        }
        let resolved = PostgresTableName.resolved(schema: schema, table: relation)
        PostgresResolvedTables.remember(resolved, for: records.spelling, client: client)
        return resolved
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}

extension PostgresConnection {
    /// Runs a statement whose rows, if any, are not wanted.
    func run(_ statement: PostgresQuery) async throws {
        for try await _ in try await query(statement, logger: PostgresValueTable.logger) {}
    }
}

extension AsyncSequence {
    /// Reads every element and drops it: a statement's rows, when only its effect matters.
    func drain() async throws {
        for try await _ in self {}
    }
}

/// How the sync tables store the server's state: each row's Swift value as JSON bytes, beside
/// the columns the statements filter on.
enum PostgresSyncRows {
    static func encode(_ value: some Encodable) throws -> Data {
        try JSONEncoder().encode(value)
    }

    /// Decodes a row; bytes another program wrote are ``/ValueStore/ValueStoreError/Code/corrupted``.
    static func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw ValueStoreError(
                .corrupted, store: "PostgreSQL sync table",
                reason: "a row of the sync tables does not decode as \(Value.self); another program wrote it")
        }
    }
}
#endif
