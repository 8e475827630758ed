#if PostgreSQL
import Foundation
import PostgresNIO
import ValueStore

// Reading a key's value: one statement, one round trip.
extension PostgresValueTable {
    func load(_ key: String) async throws -> Data {
        let store = label(key)
        try PostgresKey.validate(key, store: store)
        let table = try await resolvedTable()
        let statement: PostgresQuery = "SELECT value FROM \(unescaped: table.quoted) WHERE key = \(key)::text"
        let value: Data?? = try await connected(step: .read, store: store) { connection in
            let rows = try await PostgresPreparedQuery.run(statement, on: connection)
            var value: Data??
            for try await row in rows {
                value = .some(try row.decode(Data?.self))
            }
            return value
        }
        guard let value else { throw ValueStoreError(.notFound, store: store) }
        guard let value else { throw Self.nullValue(store: store) }
        return value
    }

    /// The error for a row whose value is NULL, which no store of the table writes.
    static func nullValue(store: String) -> ValueStoreError {
        ValueStoreError(
            .corrupted, store: store,
            reason:
                "the row's value is NULL, which no store writes; another program wrote it (the column should be NOT NULL)"
        )
    }
}
#endif
