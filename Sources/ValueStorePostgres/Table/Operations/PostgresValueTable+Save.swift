#if PostgreSQL
import Foundation
import PostgresNIO
import ValueStore

extension PostgresValueTable {
    func save(_ value: Data, for key: String) async throws {
        let (store, table, identifier) = try await writeTarget(key)
        let statement: PostgresQuery = """
            INSERT INTO \(unescaped: table.quoted) AS stored (key, value, version, token)
            SELECT \(key)::text, \(ByteBuffer(bytes: value))::bytea, 1, gen_random_uuid() WHERE \(unescaped: Self.durable) IS NOT NULL
            ON CONFLICT (key) DO UPDATE SET value = excluded.value, version = stored.version + 1, token = excluded.token, updated_at = now()
            RETURNING pg_notify(\(table.channel)::text, stored.version || ' ' || \(writer)::text || ' ' || \(identifier)::text)
            """
        try await write(statement, table: table, store: store, keys: [identifier])
    }
}
#endif
