#if PostgreSQL
import PostgresNIO
import ValueStore
import ValueStorePostgres

extension TCPForwarder {
    /// Runs `body` with a table of a scratch name, made, whose client connects through a
    /// forwarder (with at most `maximumConnections`), and the same table's `count` store
    /// through a client of its own, which nothing done to the forwarder reaches: the set-up of
    /// the tests that cut a store off its server.
    /// - Parameters:
    ///   - maximumConnections: The forwarded client's pool size.
    ///   - table: Makes the forwarded table of a name, with the bounds the test needs.
    ///   - body: The test, given the forwarder, the forwarded table and the direct `count` store.
    /// - Returns: What `body` returns.
    /// - Throws: `PostgresServer.Missing` without a server, or what `table` or `body` throws.
    static func withForwardedTable<Result: Sendable>(
        maximumConnections: Int,
        table: @Sendable (_ client: PostgresClient, _ name: String) throws -> PostgresValueTable,
        _ body:
            @Sendable (
                _ forwarder: TCPForwarder, _ table: PostgresValueTable, _ remote: ValueStore<Void, Int>
            ) async throws -> Result
    ) async throws -> Result {
        try await withForwarder { forwarder in
            let forwarded = try forwarder.configuration(maximumConnections: maximumConnections)
            return try await PostgresServer.withClient(configuration: forwarded) { here in
                try await PostgresServer.withClient { there in
                    let name = PostgresServer.scratchName()
                    let made = try table(here, name)
                    try await made.createIfNeeded()
                    let remote = try PostgresValueTable(client: there, name: name).store("count", as: Int.self)
                    return try await body(forwarder, made, remote)
                }
            }
        }
    }
}
#endif
