#if PostgreSQL
import PostgresNIO
import ValueStore

// Which table the server finds for the name: looked up once per process and spelling, and its
// shape checked.
extension PostgresValueTable {
    /// How this process knows the table's name: the client and the folded, quoted name.
    var spelling: PostgresResolvedTables.Spelling {
        PostgresResolvedTables.Spelling(client: ObjectIdentifier(client), name: table.quoted)
    }

    /// The table the server finds for the name, looked up once per process and spelling: its
    /// statements, channel and update turns use this name. A name the server finds no table for
    /// is looked up again at most every ``PostgresResolvedTables/missingFor``.
    func resolvedTable() async throws -> PostgresTableName {
        if let known = PostgresResolvedTables.lookUp(spelling, client: client) {
            return known
        }
        if let missing = PostgresResolvedTables.recentlyMissing(spelling, client: client) {
            throw missing
        }
        let found: (table: PostgresTableName, hasToken: Bool)
        do {
            found = try await resolve()
        } catch let error as ValueStoreError where (error.underlyingError as? PostgresFailure)?.sqlState == "42P01" {
            PostgresResolvedTables.rememberMissing(error, for: spelling, client: client)
            throw error
        }
        guard found.hasToken else {
            throw ValueStoreError(
                .invalidConfiguration, store: label,
                reason:
                    "the table '\(table.name)' was made by an earlier release and has no column 'token'; "
                    + "call createIfNeeded() to upgrade it")
        }
        PostgresResolvedTables.remember(found.table, for: spelling, client: client)
        return found.table
    }

    /// Looks the table up on the server and checks its shape: whether it has the `token` column
    /// that tables of the first release lack.
    func resolve() async throws -> (table: PostgresTableName, hasToken: Bool) {
        let query: PostgresQuery = """
            SELECT n.nspname::text, c.relname::text, a.attname::text, format_type(a.atttypid, a.atttypmod),
                EXISTS (
                    SELECT FROM pg_index i
                    WHERE i.indrelid = c.oid AND i.indisunique AND i.indnatts = 1 AND i.indkey[0] = a.attnum
                )
            FROM pg_class c
            JOIN pg_namespace n ON n.oid = c.relnamespace
            JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            WHERE c.oid = to_regclass(\(table.quoted)::text)
            """
        let rows = try await connected(step: .read, store: label) { connection in
            var rows: [(schema: String, table: String, column: String, type: String, unique: Bool)] = []
            for try await row in try await connection.query(query, logger: Self.logger) {
                rows.append(try row.decode((String, String, String, String, Bool).self))
            }
            return rows
        }
        guard let first = rows.first else {
            throw ValueStoreError(
                .invalidConfiguration, store: label,
                reason: "the table '\(table.name)' does not exist; call createIfNeeded() first",
                underlyingError: PostgresFailure(sqlState: "42P01", message: "relation \(table.quoted) does not exist"))
        }
        let schema = first.schema
        if PostgresTableName.systemSchemas.contains(schema) || schema.hasPrefix("pg_toast") {
            throw ValueStoreError(
                .invalidConfiguration, store: label,
                reason:
                    "the table '\(table.name)' is in the server's own schema '\(schema)'; put it in a schema of the app's"
            )
        }
        let columns = Dictionary(rows.map { ($0.column, $0) }, uniquingKeysWith: { first, _ in first })
        func refuse(_ reason: String) -> ValueStoreError {
            ValueStoreError(
                .invalidConfiguration, store: label,
                reason: "the table '\(table.name)' is not a value table: \(reason)")
        }
        let expected = [
            ("key", ["text", "character varying"]), ("value", ["bytea"]), ("version", ["bigint"]),
            ("updated_at", ["timestamp with time zone", "timestamp without time zone"]),
        ]
        for (column, types) in expected {
            guard let found = columns[column] else {
                throw refuse("it has no column '\(column)' (\(types[0]))")
            }
            guard types.contains(where: { found.type.hasPrefix($0) }) else {
                throw refuse("the column '\(column)' is \(found.type), not \(types[0])")
            }
        }
        guard columns["key"]!.unique else {
            throw refuse("the column 'key' is not its primary key")
        }
        if let token = columns["token"], token.type != "uuid" {
            throw refuse("the column 'token' is \(token.type), not uuid")
        }
        return (PostgresTableName.resolved(schema: schema, table: first.table), columns["token"] != nil)
    }
}
#endif
