#if PostgreSQL
import Foundation
import PostgresNIO
import Testing
import ValueStore
import ValueStorePostgres

extension PostgresTests {
    /// What a call says when it gets no connection, and how soon: a server that refuses, a login
    /// it refuses, a pool whose connections are all lent.
    ///
    /// The bounds checked here are the behaviour under test, the ones the PostgreSQL guide
    /// states ("refused within 0.5 s", "a refused login within 3 s"); each is asserted with a
    /// wide margin (1.5 s, 3 s) against the 2 s the store waited for a connection before.
    @Suite struct Connecting {
        @Test func aRefusedConnectionIsUnavailableWellBeforeTheLeaseWait() async throws {
            // Nothing listens on port 1: every connection is refused at once.
            try await PostgresServer.withClient(configuration: PostgresServer.configuration(port: 1)) { client in
                let table = try PostgresValueTable(client: client, name: PostgresServer.scratchName())
                let count = table.store("count", as: Int.self)
                for operation in [
                    { _ = try await count.load() },
                    { try await count.save(1) },
                    { _ = try await count.update { $0 += 1 } },
                ] as [@Sendable () async throws -> Void] {
                    let started = ContinuousClock.now
                    let error = try await #require(throws: ValueStoreError.self) { try await operation() }
                    let elapsed = ContinuousClock.now - started
                    #expect(error.code == .unavailable, "\(error)")
                    #expect("\(error)".contains("refused"), "\(error)")
                    #expect(elapsed < .milliseconds(1_500), "took \(elapsed); the server refused at once")
                }
            }
        }

        @Test func aRefusedLoginIsInvalidConfigurationNamingTheUserAndDatabaseNeverThePassword() async throws {
            let password = "wrong-\(UUID().uuidString)"
            let configuration = try PostgresServer.configuration(password: password)
            try await PostgresServer.withClient(configuration: configuration) { client in
                let table = try PostgresValueTable(client: client, name: PostgresServer.scratchName())
                let started = ContinuousClock.now
                let error = try await #require(throws: ValueStoreError.self) {
                    try await table.store("count", as: Int.self).load()
                }
                let elapsed = ContinuousClock.now - started
                #expect(error.code == .invalidConfiguration, "\(error)")
                let text = "\(error)"
                #expect(text.contains("'\(configuration.username)'"), "\(text)")
                if let database = configuration.database {
                    #expect(text.contains("'\(database)'"), "\(text)")
                }
                #expect(text.contains("28P01"), "\(text)")
                #expect(!text.contains(password), "the password is never quoted")
                #expect(!text.contains("is it running"), "\(text)")
                #expect(elapsed < .seconds(3), "took \(elapsed)")
            }
        }

        @Test func aBusyPoolIsNotReportedAsAnUnreachableServer() async throws {
            var configuration = try PostgresServer.configuration()
            configuration.options.maximumConnections = 2
            try await PostgresServer.withClient(configuration: configuration) { client in
                var configured = try PostgresValueTable(client: client, name: PostgresServer.scratchName())
                configured.connectTimeout = .milliseconds(500)
                let table = configured
                // The app lends both connections to its own work before the table's first call,
                // so no connection of the table's is known to be open.
                let (held, hold) = AsyncStream.makeStream(of: Void.self)
                let (released, release) = AsyncStream.makeStream(of: Void.self)
                let holders = (0..<2).map { _ in
                    Task {
                        try await client.withConnection { _ in
                            hold.yield()
                            for await _ in released {}
                        }
                    }
                }
                var holding = 0
                for await _ in held {
                    holding += 1
                    if holding == 2 { break }
                }
                let error = try await #require(throws: ValueStoreError.self) {
                    try await table.store("count", as: Int.self).load()
                }
                release.finish()
                for holder in holders {
                    try await holder.value
                }
                #expect(error.code == .unavailable)
                let text = "\(error)"
                #expect(text.contains("busy") && text.contains("maximumConnections"), "\(text)")
                #expect(text.contains("2"), "\(text)")
                #expect(text.contains("0 held by listening connections"), "\(text)")
                #expect(!text.contains("is it running"), "\(text)")
            }
        }
    }
}
#endif
