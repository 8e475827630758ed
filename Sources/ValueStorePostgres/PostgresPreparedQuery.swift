#if PostgreSQL
import PostgresNIO
import Synchronization

/// Runs the table's statements as named prepared statements, so the server parses and plans each
/// once per connection rather than on every call: an upsert the server runs in about 140 µs
/// unprepared takes about 55 µs prepared (`pgbench`, loopback).
///
/// postgres-nio prepares a statement on a connection the first time it runs there and keeps it by
/// name, but it reads the name and the SQL from the statement's type. A table's statements differ
/// by table, so ``Statement`` reads them from a task-local value that ``run(_:on:)`` binds for the
/// one call. The name is a hash of the SQL and that SQL's generation: postgres-nio keeps a failed
/// preparation for good (a table not created yet, a lock timeout while a migration holds the
/// table), so each such failure moves the statement's later calls to a fresh name.
enum PostgresPreparedQuery {
    /// Runs `query` on `connection` as a prepared statement and returns its rows.
    ///
    /// A failure to prepare or bind (nothing ran) moves the statement to a new name; when the
    /// connection had lost the statement (`26000`, after `DEALLOCATE ALL`) or the table's shape
    /// changed under it (`0A000`), it is prepared again under the new name at once.
    static func run(
        _ query: PostgresQuery,
        on connection: PostgresConnection
    ) async throws -> AsyncThrowingMapSequence<PostgresRowSequence, PostgresRow> {
        let hash = PostgresKey.hash(query.sql)
        do {
            return try await execute(query, named: hash, on: connection)
        } catch let error as PSQLError where error.code == .server {
            // `execute` returns once the statement is bound; it throws only when preparing or
            // binding failed, so nothing ran.
            forgetPrepared(hash)
            guard let state = error.serverInfo?[.sqlState], state == "26000" || state == "0A000" else { throw error }
            return try await execute(query, named: hash, on: connection)
        }
    }

    private static func execute(
        _ query: PostgresQuery,
        named hash: String,
        on connection: PostgresConnection
    ) async throws -> AsyncThrowingMapSequence<PostgresRowSequence, PostgresRow> {
        let generation = generations.withLock { $0[hash, default: 0] }
        let text = Text(name: "valuestore_\(hash)_\(generation)", sql: query.sql)
        return try await Statement.$text.withValue(text) {
            try await connection.execute(Statement(bindings: query.binds), logger: PostgresValueTable.logger)
        }
    }

    /// Moves the statement whose SQL hashes to `hash` to a new name.
    private static func forgetPrepared(_ hash: String) {
        generations.withLock { $0[hash, default: 0] += 1 }
    }

    /// Each statement's generation, by the hash of its SQL; absent is 0.
    private static let generations = Mutex<[String: Int]>([:])

    /// A statement's name and SQL, for the one call that runs it.
    struct Text: Sendable {
        var name: String
        var sql: String
    }

    /// The statement postgres-nio prepares and runs, named and written by the bound ``Text``.
    struct Statement: PostgresPreparedStatement {
        @TaskLocal static var text: Text?

        // postgres-nio reads these only inside `run`, which binds `text`.
        static var name: String { text!.name }
        static var sql: String { text!.sql }

        var bindings: PostgresBindings

        func makeBindings() -> PostgresBindings { bindings }

        func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
    }
}
#endif
