#if PostgreSQL
import Foundation
import PostgresNIO
import ValueStore

extension PostgresValueTable {
    /// Reads the value and its token, runs `body` with nothing locked on the server and no
    /// transaction open, and writes only if the row is still the one read; otherwise it starts
    /// again. Updates of the key in this process take turns (``PostgresUpdateTurns``).
    ///
    /// Every write gives the row a new random token, so a row removed and saved again, or written
    /// by a promoted standby that reused a version, never passes for the one the body read. The
    /// version is checked too, for writers of the first release, which keep the token.
    func update(
        _ key: String,
        _ body: (_ value: inout Data?) async throws -> Void
    ) async throws -> Data? {
        let store = label(key)
        try PostgresKey.validate(key, store: store)
        let table = try await resolvedTable()
        return try await PostgresUpdateTurns.shared.taking(turn(key, in: table), store: store) {
            try await updateInTurn(key, table: table, store: store, body)
        }
    }

    private func updateInTurn(
        _ key: String,
        table: PostgresTableName,
        store: String,
        _ body: (_ value: inout Data?) async throws -> Void
    ) async throws -> Data? {
        let identifier = PostgresKey.identifier(key)
        let read: PostgresQuery =
            "SELECT value, version, token FROM \(unescaped: table.quoted) WHERE key = \(key)::text"
        while true {
            let current: (value: Data?, version: Int64, token: UUID)? = try await connected(step: .read, store: store) {
                connection in
                var current: (Data?, Int64, UUID)?
                for try await row in try await PostgresPreparedQuery.run(read, on: connection) {
                    current = try row.decode((Data?, Int64, UUID).self)
                }
                return current
            }
            if let current, current.value == nil {
                throw Self.nullValue(store: store)
            }
            var value = current?.value
            try await body(&value)
            // A task cancelled while the body ran writes nothing.
            try Task.checkCancellation()
            let statement: PostgresQuery
            switch (current, value) {
            case (nil, nil):
                return nil
            case (nil, let new?):
                statement = """
                    INSERT INTO \(unescaped: table.quoted) (key, value, version, token)
                    SELECT \(key)::text, \(ByteBuffer(bytes: new))::bytea, 1, gen_random_uuid() WHERE \(unescaped: Self.durable) IS NOT NULL
                    ON CONFLICT (key) DO NOTHING
                    RETURNING pg_notify(\(table.channel)::text, version || ' ' || \(writer)::text || ' ' || \(identifier)::text)
                    """
            case (let old?, nil):
                statement = """
                    DELETE FROM \(unescaped: table.quoted)
                    WHERE key = \(key)::text AND version = \(old.version)::int8 AND token = \(old.token)::uuid
                        AND \(unescaped: Self.durable) IS NOT NULL
                    RETURNING pg_notify(\(table.channel)::text, (version + 1) || ' ' || \(writer)::text || ' ' || \(identifier)::text)
                    """
            case (let old?, let new?):
                statement = """
                    UPDATE \(unescaped: table.quoted)
                    SET value = \(ByteBuffer(bytes: new))::bytea, version = version + 1, token = gen_random_uuid(), updated_at = now()
                    WHERE key = \(key)::text AND version = \(old.version)::int8 AND token = \(old.token)::uuid
                        AND \(unescaped: Self.durable) IS NOT NULL
                    RETURNING pg_notify(\(table.channel)::text, version || ' ' || \(writer)::text || ' ' || \(identifier)::text)
                    """
            }
            do {
                if try await write(statement, table: table, store: store, keys: [identifier]) {
                    return value
                }
                // Another writer changed the row since it was read: read it again.
            } catch let error as ValueStoreError where (error.underlyingError as? PostgresFailure)?.isRetryable == true
            {
                // A serialization failure or deadlock rolled the write back: read again.
            }
        }
    }
}

extension PostgresFailure {
    /// A serialization failure or a deadlock: the write rolled back and may be tried again.
    var isRetryable: Bool {
        sqlState == "40001" || sqlState == "40P01"
    }
}
#endif
