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
/// one call. The name is a hash of the SQL and a generation: postgres-nio also keeps a failed
/// preparation (a table not created yet) for good, so a failure the schema could explain moves
/// every later call to fresh names (``forgetPrepared(after:)``).
enum PostgresPreparedQuery {
    /// Runs `query` on `connection` as a prepared statement and returns its rows. Every bind in
    /// `query` must carry an explicit cast in its SQL (`\(key)::text`): the statement is prepared
    /// without parameter types, which the server then takes from the casts.
    static func run(
        _ query: PostgresQuery,
        on connection: PostgresConnection
    ) async throws -> AsyncThrowingMapSequence<PostgresRowSequence, PostgresRow> {
        let text = Text(
            name: "valuestore_\(PostgresKey.hash(query.sql))_\(generation.load(ordering: .relaxed))",
            sql: query.sql)
        return try await Statement.$text.withValue(text) {
            try await connection.execute(Statement(bindings: query.binds), logger: PostgresValueTable.logger)
        }
    }

    /// After `error`, prepares every statement again under new names when the schema could
    /// explain it: an undefined or changed table or column, a missing privilege, or a statement
    /// the connection no longer has.
    static func forgetPrepared(after error: PSQLError) {
        guard let state = error.serverInfo?[.sqlState],
            state.hasPrefix("42") || state.hasPrefix("3F") || state == "26000" || state == "0A000"
        else { return }
        generation.add(1, ordering: .relaxed)
    }

    /// Part of every statement's name; one more after each failure ``forgetPrepared(after:)``
    /// counts.
    private static let generation = Atomic<Int>(0)

    /// A statement's name and SQL, for the one call that runs it.
    struct Text: Sendable {
        var name: String
        var sql: String
    }

    /// The statement postgres-nio prepares and runs, named and written by the bound ``Text``.
    struct Statement: PostgresPreparedStatement {
        @TaskLocal static var text = Text(name: "", sql: "")

        static var name: String { text.name }
        static var sql: String { text.sql }

        var bindings: PostgresBindings

        func makeBindings() -> PostgresBindings { bindings }

        func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
    }
}
#endif
