#if PostgreSQL
import Foundation
import PostgresNIO
import ValueStore

// The statements behind every store of a table. Keys and values are always bind parameters; the
// table name is validated and quoted by `PostgresTableName`. Each write is one statement, one
// round trip: its one-time filter sets `synchronous_commit` for its own transaction, it writes,
// and its RETURNING clause notifies, so the notification is delivered at commit and never for a
// rollback. (The filter and the notification ride on the write itself rather than on CTEs around
// it: the server plans and runs that in about two thirds of the time.)
extension PostgresValueTable {
    /// What identifies `key`'s updates and writes among this process's, for
    /// ``PostgresUpdateTurns``: the client, the resolved table and the key.
    func turn(_ key: String, in table: PostgresTableName) -> String {
        "\(writer)\u{0}\(table.name)\u{0}\(key)"
    }

    /// What a save or a remove of `key` writes to: the key's store label, the resolved table and
    /// the key's identifier in notifications. Throws for an invalid key, and
    /// ``/ValueStore/ValueStoreError/Code/nestedWrite`` inside an update of the same key.
    func writeTarget(_ key: String) async throws -> (store: String, table: PostgresTableName, identifier: String) {
        let store = label(key)
        try PostgresKey.validate(key, store: store)
        let table = try await resolvedTable()
        try OpenPostgresUpdate.refuseWrite(to: turn(key, in: table), store: store)
        return (store, table, PostgresKey.identifier(key))
    }

    /// Runs a write statement and signals this process's streams of `keys`; returns whether it
    /// changed a row.
    @discardableResult
    func write(_ statement: PostgresQuery, table: PostgresTableName, store: String, keys: [String]) async throws
        -> Bool
    {
        let changed: Bool
        do {
            let client = client
            let settled: @Sendable () -> Void = {
                PostgresChanges.shared.didWrite(client: client, table: table, keys: keys)
            }
            changed = try await connected(step: .write, store: store, settled: settled) { connection in
                var changed = false
                for try await _ in try await PostgresPreparedQuery.run(statement, on: connection) {
                    changed = true
                }
                return changed
            }
        } catch let error as ValueStoreError where error.code == .outcomeUnknown {
            // It may have happened: observers reload, which costs one load if it did not.
            PostgresChanges.shared.didWrite(client: client, table: table, keys: keys)
            throw error
        }
        if changed {
            PostgresChanges.shared.didWrite(client: client, table: table, keys: keys)
        }
        return changed
    }

    /// What a key's store is called in errors: `PostgreSQL table 'app_values', key 'flags'`.
    /// A key over 200 bytes is quoted by its first 100 bytes, its length and its hash.
    func label(_ key: String) -> String {
        "\(label), key \(PostgresKey.quoted(key))"
    }
}
#endif
