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
/// one call. The name is a hash of the SQL and that SQL's generation.
///
/// postgres-nio keeps a failed preparation for good (a table not created yet, a lock timeout while
/// a migration holds the table), so a name that failed is never used again. A failure does not
/// mint a new name each time, which would grow every connection's memory with each failed call:
/// the statement runs unnamed (parsed on each call) until it succeeds once, and only then moves to
/// a fresh name. The failed name is deallocated on the connection, in case the server kept it. A
/// connection whose statements vanish or collide again and again (a transaction-mode pooler
/// without prepared-statement support) makes every statement run unnamed from then on.
enum PostgresPreparedQuery {
    /// Runs `query` on `connection` as a prepared statement and returns its rows.
    ///
    /// A failure to prepare or bind (nothing ran) makes the statement run unnamed until it
    /// succeeds; when the connection had lost the statement (`26000`, after `DEALLOCATE ALL`), a
    /// pooler's other session had one of that name (`42P05`), or the table's shape changed under
    /// it (`0A000`), it runs unnamed again at once.
    static func run(
        _ query: PostgresQuery,
        on connection: PostgresConnection
    ) async throws -> AsyncThrowingMapSequence<PostgresRowSequence, PostgresRow> {
        let hash = PostgresKey.hash(query.sql)
        let (name, unnamed) = state.withLock { state in
            (
                "valuestore_\(hash)_\(state.generations[hash, default: 0])",
                state.unnamedForGood || state.failing.contains(hash)
            )
        }
        if unnamed {
            return try await runUnnamed(query, hash: hash, on: connection)
        }
        do {
            return try await execute(query, named: name, on: connection)
        } catch let error as PSQLError where error.code == .server {
            // `execute` returns once the statement is bound; it throws only when preparing or
            // binding failed, so nothing ran.
            let sqlState = error.serverInfo?[.sqlState]
            state.withLock { state in
                state.failing.insert(hash)
                if sqlState == "26000" || sqlState == "42P05" {
                    state.vanished += 1
                    state.unnamedForGood = state.vanished >= vanishedForGood
                }
            }
            // The server keeps a statement whose binding failed; forget it (an error if it did not).
            _ = try? await connection.query(
                PostgresQuery(unsafeSQL: "DEALLOCATE \"\(name)\""), logger: PostgresValueTable.logger)
            guard let sqlState, ["26000", "42P05", "0A000"].contains(sqlState) else { throw error }
            return try await runUnnamed(query, hash: hash, on: connection)
        }
    }

    /// Runs `query` as the unnamed statement; once it succeeds, the named statement gets a fresh
    /// name, to be prepared on each connection's next call.
    private static func runUnnamed(
        _ query: PostgresQuery,
        hash: String,
        on connection: PostgresConnection
    ) async throws -> AsyncThrowingMapSequence<PostgresRowSequence, PostgresRow> {
        let rows = try await connection.query(query, logger: PostgresValueTable.logger)
        state.withLock { state in
            if state.failing.remove(hash) != nil {
                state.generations[hash, default: 0] += 1
            }
        }
        return rows.map { (row: PostgresRow) throws -> PostgresRow in row }
    }

    private static func execute(
        _ query: PostgresQuery,
        named name: String,
        on connection: PostgresConnection
    ) async throws -> AsyncThrowingMapSequence<PostgresRowSequence, PostgresRow> {
        let text = Text(name: name, sql: query.sql)
        return try await Statement.$text.withValue(text) {
            try await connection.execute(Statement(bindings: query.binds), logger: PostgresValueTable.logger)
        }
    }

    /// After this many lost or colliding statements, every statement runs unnamed.
    static let vanishedForGood = 20

    struct State {
        /// Each statement's generation, by the hash of its SQL; absent is 0.
        var generations: [String: Int] = [:]
        /// The statements whose named form failed and that run unnamed until one call succeeds.
        var failing: Set<String> = []
        /// How many times a connection lost a statement or found another of its name.
        var vanished = 0
        /// Whether statements run unnamed from now on.
        var unnamedForGood = false
    }

    private static let state = Mutex(State())

    /// How many names a statement has had; tests check that repeated failures mint none.
    static func generation(of sql: String) -> Int {
        state.withLock { $0.generations[PostgresKey.hash(sql), default: 0] }
    }

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
