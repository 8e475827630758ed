#if PostgreSQL
import Foundation
import PostgresNIO
import Testing
import ValueStore
@testable import ValueStorePostgres

extension PostgresTests {
    /// What the store learns about reaching a client lasts while the client is used, and no
    /// longer: a client the allocator places at a dropped one's address learns afresh, and
    /// nothing is left behind.
    ///
    /// The allocator's reuse of an address is made here by construction: two clients' uses are
    /// given one key (`PostgresClientUse(_:key:)`), as two clients at one address would have.
    @Suite struct ClientUse {
        /// A client that is never run, of a server that refuses: nothing here connects.
        static func idleClient() -> PostgresClient {
            PostgresClient(
                configuration: PostgresClient.Configuration(
                    host: "127.0.0.1", port: 1, username: "nobody", password: nil, database: nil, tls: .disable))
        }

        @Test func aClientAtADroppedClientsAddressIsNotKnownReached() {
            let registry = PostgresClientUse.Registry()
            let address = ObjectIdentifier(registry)
            let firstID: UInt64
            do {
                let first = PostgresClientUse(Self.idleClient(), key: address, registry: registry)
                firstID = first.id
                PostgresReachability.shared.reached(first)
                let alongside = PostgresClientUse(first.client, key: address, registry: registry)
                #expect(alongside.id == firstID, "two uses of one client share what is learned")
                #expect(PostgresReachability.shared.isReached(alongside))
            }

            let second = PostgresClientUse(Self.idleClient(), key: address, registry: registry)
            #expect(second.id != firstID)
            #expect(!PostgresReachability.shared.isReached(second), "learned about the dropped client")
            #expect(!PostgresReachability.shared.knows(firstID))
        }

        /// The connections borrowed of a client, whether they must prove themselves, and the name
        /// its writes go under are the client's own too.
        @Test func aClientAtADroppedClientsAddressInheritsNeitherLeasesNorWriterName() async {
            let registry = PostgresClientUse.Registry()
            let address = ObjectIdentifier(registry)
            let firstWriter: String
            do {
                let first = PostgresClientUse(Self.idleClient(), key: address, registry: registry)
                firstWriter = PostgresChanges.writer(for: first)
                // As after its listening connection was proved dead.
                await PostgresLeases.shared.closeIdle(of: first)
                let alongside = PostgresClientUse(first.client, key: address, registry: registry)
                #expect(PostgresLeases.shared.provesConnections(of: alongside), "two uses of one client share it")
                #expect(PostgresChanges.writer(for: alongside) == firstWriter, "one client writes under one name")
            }

            let second = PostgresClientUse(Self.idleClient(), key: address, registry: registry)
            #expect(
                !PostgresLeases.shared.provesConnections(of: second),
                "a new client's connections would prove themselves for the dropped client's dead listener")
            #expect(
                PostgresChanges.writer(for: second) != firstWriter,
                "a new client would skip the dropped client's notifications as its own")
        }

        @Test func aThousandClientsUsedAndDroppedLeaveNothingBehind() async throws {
            let registry = PostgresClientUse.Registry()
            var ids: [UInt64] = []
            var writers: Set<String> = []
            for _ in 0..<1_000 {
                let use = PostgresClientUse(Self.idleClient(), registry: registry)
                PostgresReachability.shared.reached(use)
                await PostgresLeases.shared.closeIdle(of: use)
                #expect(PostgresLeases.shared.knows(use.id))
                ids.append(use.id)
                writers.insert(PostgresChanges.writer(for: use))
            }
            #expect(Set(ids).count == 1_000)
            #expect(writers.count == 1_000, "each client writes under a name of its own")
            #expect(registry.count == 0, "the registry is back to its starting size")
            #expect(ids.filter { PostgresReachability.shared.knows($0) }.isEmpty)
            #expect(ids.filter { PostgresLeases.shared.knows($0) }.isEmpty, "the leases are back to empty")

            // The same through tables, in the shared registry, and a probe's outcome with them.
            var tableIDs: [UInt64] = []
            for index in 0..<1_000 {
                let table = try PostgresValueTable(client: Self.idleClient(), name: "clients_\(index)")
                PostgresReachability.shared.reached(table.clientUse)
                await PostgresLeases.shared.closeIdle(of: table.clientUse)
                tableIDs.append(table.clientUse.id)
            }
            #expect(tableIDs.filter { PostgresClientUse.Registry.shared.contains($0) }.isEmpty)
            #expect(tableIDs.filter { PostgresReachability.shared.knows($0) }.isEmpty)
            #expect(tableIDs.filter { PostgresLeases.shared.knows($0) }.isEmpty)

            var probed = PostgresClientUse(Self.idleClient())
            let probedID = probed.id
            PostgresProbe.shared.start(probed)
            #expect(await eventually { PostgresProbe.shared.outcome(of: probed) != nil }, "the probe of port 1 ended")
            probed = PostgresClientUse(Self.idleClient())
            // The probe's task lets go of its use as it returns.
            #expect(await eventually { !PostgresProbe.shared.knows(probedID) }, "the outcome went with its use")
            #expect(!PostgresClientUse.Registry.shared.contains(probedID))
        }

        /// The defect as a full run met it: a new client of a server that refuses, at the
        /// address of a dropped client that had reached its server, waited the whole
        /// `connectTimeout` and was reported as a busy pool instead of a refused connection.
        @Test func aRefusedConnectionAtAReachedClientsAddressIsStillReportedRefused() async throws {
            let marker = PostgresClientUse.Registry()
            let address = ObjectIdentifier(marker)
            let firstID = try await PostgresServer.withClient { client in
                var table = try await PostgresServer.scratchTable(client)
                table.clientUse = PostgresClientUse(client, key: address)
                try await table.store("count", as: Int.self).save(1)
                #expect(PostgresReachability.shared.isReached(table.clientUse))
                #expect(PostgresLeases.shared.knows(table.clientUse.id), "the borrowed connection is kept")
                return table.clientUse.id
            }
            // The lease's task lets go of the table's use as it returns the connection.
            #expect(await eventually { !PostgresClientUse.Registry.shared.contains(firstID) }, "the first use ended")
            #expect(await eventually { !PostgresLeases.shared.knows(firstID) }, "the borrowed connections went with it")

            try await PostgresServer.withClient(configuration: PostgresServer.configuration(port: 1)) { client in
                var table = try PostgresValueTable(client: client, name: PostgresServer.scratchName())
                table.clientUse = PostgresClientUse(client, key: address)
                table.connectTimeout = .seconds(3)
                let error = try await #require(throws: ValueStoreError.self) {
                    try await table.store("count", as: Int.self).load()
                }
                #expect(error.code == .unavailable, "\(error)")
                #expect("\(error)".contains("the server refused the connection"), "\(error)")
            }
            withExtendedLifetime(marker) {}
        }
    }
}
#endif
