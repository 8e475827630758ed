#if PostgreSQL
import Foundation
import PostgresNIO
import Testing
import ValueStore
import ValueStorePostgres

extension PostgresTests {
    /// What each failure is called, what it leaves behind, and how soon the caller hears.
    @Suite struct Failures {
        @Test func aKeyWithNULIsInvalidConfigurationBeforeAnythingIsSent() async throws {
            try await PostgresServer.withClient { client in
                let table = try await PostgresServer.scratchTable(client)
                let key = "a\u{0}b"
                let store = table.store(key, as: Int.self)
                for operation in [
                    { _ = try await store.load() },
                    { try await store.save(1) },
                    { try await store.remove() },
                    { _ = try await store.update { $0 += 1 } },
                    { try await table.batch { try $0.set(1, for: key) } },
                ] as [@Sendable () async throws -> Void] {
                    let error = try await #require(throws: ValueStoreError.self) { try await operation() }
                    #expect(error.code == .invalidConfiguration, "\(error)")
                    #expect(error.underlyingError == nil, "refused here, not by the server")
                }
            }
        }

        @Test func errorTextQuotesALongKeyByItsPrefixLengthAndHash() async throws {
            try await PostgresServer.withClient { client in
                let table = try await PostgresServer.scratchTable(client)
                let key = "profile-" + String(repeating: "x", count: 100_000)
                let error = try await #require(throws: ValueStoreError.self) {
                    try await table.store(key, as: Int.self).load()
                }
                #expect(error.code == .notFound)
                #expect("\(error)".utf8.count < 1_024, "\("\(error)".utf8.count) bytes")
                #expect("\(error)".contains("profile-xxx"))
                #expect(table.dataStore(key).label.utf8.count < 1_024)
                let refused = try await #require(throws: ValueStoreError.self) {
                    try await table.batch { try $0.set(Double.nan, for: key) }
                }
                #expect(refused.code == .encodingFailed)
                #expect("\(refused)".utf8.count < 1_024, "\("\(refused)".utf8.count) bytes")
            }
        }

        @Test func aRepeatedFailureLeavesNoPreparedStatementsBehind() async throws {
            try await PostgresServer.withClient(configuration: PostgresServer.oneConnection()) { client in
                let table = try await PostgresServer.scratchTable(client)
                let count = table.store("count", as: Int.self)
                try await count.save(1)
                _ = try await count.update { $0 += 1 }
                let prepared: PostgresQuery = "SELECT count(*)::bigint FROM pg_prepared_statements"
                let before = try await PostgresServer.integer(client, prepared)
                for round in 0..<5 {
                    // The column's type changes under the prepared read: the server refuses it
                    // ("cached plan must not change result type") until it is prepared again.
                    for type in ["integer", "bigint"] {
                        try await PostgresServer.execute(
                            client, "ALTER TABLE \(unescaped: table.name) ALTER COLUMN version TYPE \(unescaped: type)")
                        #expect(try await count.update { $0 += 1 } == 3 + round * 2 + (type == "bigint" ? 1 : 0))
                    }
                }
                #expect(try await PostgresServer.integer(client, prepared) == before)
            }
        }

        @Test func aWriteCancelledAfterItWasSentIsOutcomeUnknownAtOnceAndCancelledOnTheServer() async throws {
            try await PostgresServer.withTwoClients { first, second in
                let table = try await PostgresServer.scratchTable(first)
                let count = table.store("count", as: Int.self)
                try await count.save(1)
                let cached = table.store("count", as: Int.self).cached()
                #expect(
                    try await eventually {
                        _ = try await cached.load()
                        return try cached.loadImmediately?(()) == 1
                    })
                let blocked = try await whileLocked(
                    by: second, "SELECT key FROM \(unescaped: table.name) WHERE key = 'count' FOR UPDATE",
                    cancelling: true
                ) {
                    _ = try await count.save(2)
                }
                let result = try #require(blocked.outcome, "the save did not return within 10 s of its cancellation")
                #expect(blocked.elapsed < .seconds(5), "returned \(blocked.elapsed) after its cancellation")
                let error = try #require(throws: ValueStoreError.self) { try result.get() }
                #expect(error.code == .outcomeUnknown, "\(error)")
                #expect(blocked.cancelledOnTheServer, "the save still waited on the server")
                // Whatever the server holds, this process's cache agrees once it was signalled.
                let stored = try await PostgresValueTable(client: second, name: table.name).store("count", as: Int.self)
                    .load()
                #expect(stored == 1, "cancelled before it could commit")
                #expect(try await eventually { try await cached.load() == stored })
            }
        }

        @Test func aReadCancelledWhileTheTableIsLockedReturnsAtOnceAndIsCancelledOnTheServer() async throws {
            try await PostgresServer.withTwoClients { first, second in
                let table = try await PostgresServer.scratchTable(first)
                let count = table.store("count", as: Int.self)
                try await count.save(1)
                let blocked = try await whileLocked(
                    by: second, "LOCK TABLE \(unescaped: table.name) IN ACCESS EXCLUSIVE MODE", cancelling: true
                ) {
                    _ = try await count.load()
                }
                let result = try #require(blocked.outcome, "the load did not return within 10 s of its cancellation")
                #expect(blocked.elapsed < .seconds(5), "returned \(blocked.elapsed) after its cancellation")
                #expect(throws: CancellationError.self) { try result.get() }
                #expect(blocked.cancelledOnTheServer, "the load still waited on the server")
                #expect(try await count.load() == 1)
            }
        }

        @Test func aWritePastItsOperationTimeoutIsOutcomeUnknownAndCancelledOnTheServer() async throws {
            try await PostgresServer.withTwoClients { first, second in
                var configured = try await PostgresServer.scratchTable(first)
                configured.operationTimeout = .milliseconds(500)
                let table = configured
                let count = table.store("count", as: Int.self)
                try await count.save(1)
                let blocked = try await whileLocked(
                    by: second, "SELECT key FROM \(unescaped: table.name) WHERE key = 'count' FOR UPDATE",
                    cancelling: false
                ) {
                    _ = try await count.save(2)
                }
                let result = try #require(blocked.outcome, "the save did not return within 10 s")
                let error = try #require(throws: ValueStoreError.self) { try result.get() }
                #expect(error.code == .outcomeUnknown, "\(error)")
                #expect("\(error)".contains("operationTimeout"), "\(error)")
                #expect(blocked.cancelledOnTheServer, "the save still waited on the server")
                #expect(try await count.load() == 1)
            }
        }

        @Test func aReadPastItsOperationTimeoutIsUnavailableAndCancelledOnTheServer() async throws {
            try await PostgresServer.withTwoClients { first, second in
                var configured = try await PostgresServer.scratchTable(first)
                configured.operationTimeout = .milliseconds(500)
                let table = configured
                let count = table.store("count", as: Int.self)
                try await count.save(1)
                let blocked = try await whileLocked(
                    by: second, "LOCK TABLE \(unescaped: table.name) IN ACCESS EXCLUSIVE MODE", cancelling: false
                ) {
                    _ = try await count.load()
                }
                let result = try #require(blocked.outcome, "the load did not return within 10 s")
                let error = try #require(throws: ValueStoreError.self) { try result.get() }
                #expect(error.code == .unavailable, "\(error)")
                #expect(blocked.cancelledOnTheServer, "the load still waited on the server")
                #expect(try await count.load() == 1)
            }
        }

        @Test func aReadOnAPooledConnectionThatWentSilentIsTriedOnAFreshOne() async throws {
            try await TCPForwarder.withForwarder { forwarder in
                let configuration = try forwarder.configuration(maximumConnections: 2)
                try await PostgresServer.withClient(configuration: configuration) { client in
                    var configured = try await PostgresServer.scratchTable(client)
                    configured.operationTimeout = .milliseconds(500)
                    let table = configured
                    let count = table.store("count", as: Int.self)
                    try await count.save(1)
                    #expect(try await count.load() == 1)
                    // The pooled connection goes silent for good (a crashed host, a moved virtual
                    // IP); new connections pass.
                    forwarder.blackholeOpenConnections()
                    let loading = Task { try await count.load() }
                    let outcome = await withTaskGroup(of: Result<Int, any Error>?.self) { group in
                        group.addTask { await loading.result }
                        group.addTask {
                            try? await Task.sleep(for: .seconds(10))
                            return nil
                        }
                        let first = await group.next()!
                        group.cancelAll()
                        if first == nil {
                            loading.cancel()
                        }
                        return first
                    }
                    let result = try #require(outcome, "the load did not return within 10 s")
                    #expect(try result.get() == 1)
                }
            }
        }

        @Test func aStatementNameAnotherSessionPreparedIsNotAnOpaqueFailure() async throws {
            // Behind a transaction-mode pooler without prepared-statement support, a server
            // session can already hold a statement of the name the store prepares (42P05).
            try await PostgresServer.withClient(configuration: PostgresServer.oneConnection()) { client in
                let table = try await PostgresServer.scratchTable(client)
                let load = #"SELECT value FROM "public"."\#(table.name)" WHERE key = $1::text"#
                let name = "valuestore_\(fnv1a(load))_0"
                try await PostgresServer.execute(client, "PREPARE \(unescaped: name) AS SELECT 1")
                await #expect(throws: ValueStoreError.notFound) { try await table.store("k", as: Int.self).load() }
                try await table.store("k", as: Int.self).save(3)
                #expect(try await table.store("k", as: Int.self).load() == 3)
            }
        }

        @Test func aBusyPoolIsCalledBusyWithItsSizeAndItsListeners() async throws {
            var configuration = try PostgresServer.configuration()
            configuration.options.maximumConnections = 2
            try await PostgresServer.withClient(configuration: configuration) { client in
                try await PostgresServer.withClient { other in
                    var configured = try await PostgresServer.scratchTable(client)
                    configured.connectTimeout = .milliseconds(500)
                    let table = configured
                    // One connection listens for the table's changes, the other is held.
                    let watching = Task {
                        for await _ in table.store("count", as: Int.self).changes() {}
                    }
                    defer { watching.cancel() }
                    #expect(
                        try await eventually {
                            try await PostgresServer.integer(
                                other,
                                "SELECT count(*)::bigint FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND (query LIKE 'LISTEN%' OR query LIKE '%valuestore listening on%')"
                            ) == 1
                        })
                    let (held, hold) = AsyncStream.makeStream(of: Void.self)
                    let (released, release) = AsyncStream.makeStream(of: Void.self)
                    let holder = Task {
                        try await client.withConnection { _ in
                            hold.yield()
                            for await _ in released {}
                        }
                    }
                    for await _ in held { break }
                    let error = try await #require(throws: ValueStoreError.self) {
                        try await table.store("count", as: Int.self).load()
                    }
                    release.finish()
                    try await holder.value
                    #expect(error.code == .unavailable)
                    let text = "\(error)"
                    #expect(text.contains("busy") && text.contains("maximumConnections 2"), "\(text)")
                    #expect(text.contains("1 held by listening connections"), "\(text)")
                }
            }
        }
    }
}

/// FNV-1a over the UTF-8 bytes, as 16 hexadecimal digits: how the store names its statements.
func fnv1a(_ text: String) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in text.utf8 {
        hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
    }
    let digits = String(hash, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
}

/// How an operation that waited on a lock ended.
struct BlockedOperation {
    /// Its result, or nil if it had not returned 10 s after it was cancelled (or started): the
    /// lock is held until then, so an operation that waits for the lock until it gets it has none.
    var outcome: Result<Void, any Error>?
    /// How long after the cancellation (or the start) it returned. Cancelling returns at once;
    /// the tests allow 5 s for a loaded machine (the bound they had, 1 s, was too tight), which
    /// still tells "at once" from a wait that ends with the lock's 10 s.
    var elapsed: Duration
    /// Whether the server stopped waiting for the lock on its behalf while the lock was held.
    var cancelledOnTheServer: Bool
}

/// Runs `operation` while another client holds a lock (`lock`, run in a transaction of
/// `holder`), cancelling it once it waits on the server when `cancelling`. The lock is released
/// once the operation has returned and the server has had 10 s to stop waiting, or 10 s after
/// the cancellation (or the start) at the latest, so an operation that never answers still ends
/// the test.
func whileLocked(
    by holder: PostgresClient,
    _ lock: PostgresQuery,
    cancelling: Bool,
    _ operation: @escaping @Sendable () async throws -> Void
) async throws -> BlockedOperation {
    let logger = Logger(label: "tests")
    let (locked, hasLocked) = AsyncStream.makeStream(of: Void.self)
    let (released, release) = AsyncStream.makeStream(of: Void.self)
    let holding = Task {
        try await holder.withTransaction(logger: logger) { connection in
            for try await _ in try await connection.query(lock, logger: logger) {}
            hasLocked.yield()
            for await _ in released {}
        }
    }
    for await _ in locked { break }
    let waiting: PostgresQuery = "SELECT count(*)::bigint FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
    let started = ContinuousClock.now
    let running = Task { try await operation() }
    #expect(try await eventually { try await PostgresServer.integer(holder, waiting) == 1 })
    let cancelled = ContinuousClock.now
    if cancelling {
        running.cancel()
    }
    let (outcome, elapsed) = await withTaskGroup(of: Result<Void, any Error>?.self) { group in
        group.addTask { await running.result }
        group.addTask {
            try? await Task.sleep(for: .seconds(10))
            return nil
        }
        let first = await group.next()!
        let elapsed = ContinuousClock.now - (cancelling ? cancelled : started)
        group.cancelAll()
        if first == nil {
            release.finish()
        }
        await group.waitForAll()
        return (first, elapsed)
    }
    let stopped = try await eventually { try await PostgresServer.integer(holder, waiting) == 0 }
    release.finish()
    try await holding.value
    return BlockedOperation(outcome: outcome, elapsed: elapsed, cancelledOnTheServer: outcome != nil && stopped)
}
#endif
