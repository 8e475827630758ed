#if PostgreSQL
import Foundation
import PostgresNIO
import ValueStore

extension PostgresValueTable {
    func remove(_ key: String) async throws {
        let (store, table, identifier) = try await writeTarget(key)
        let statement: PostgresQuery = """
            DELETE FROM \(unescaped: table.quoted)
            WHERE key = \(key)::text AND \(unescaped: Self.durable) IS NOT NULL
            RETURNING pg_notify(\(table.channel)::text, (version + 1) || ' ' || \(writer)::text || ' ' || \(identifier)::text)
            """
        try await write(statement, table: table, store: store, keys: [identifier])
    }
}
#endif
