#if PostgreSQL && Configuration
import Configuration
import ConfigurationTesting
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Testing
import ValueStore
import ValueStoreConfiguration
import ValueStorePostgres
import ValueStoreTestSupport

extension PostgresTests {
    /// The configuration provider over a real table: swift-configuration's compatibility test,
    /// and a flag another machine flips reaching a `ConfigReader` watcher.
    @Suite struct ConfigProvider {
        @Test func passesSwiftConfigurationsProviderCompatTest() async throws {
            try await PostgresServer.withClient { client in
                let table = try await PostgresServer.scratchTable(client)
                try await table.dataStore("compat").save(ConfigDocuments.compat)
                let provider = try await ValueStoreConfigProvider<JSONSnapshot>(
                    store: table.dataStore("compat"), name: "compat")
                try await ProviderCompatTest(provider: provider).runTest()
            }
        }

        @Test func aFlagAnotherMachineFlipsReachesAConfigReaderWatcher() async throws {
            try await PostgresServer.withTwoTables { here, there in
                let flags = try await ValueStoreConfigProvider<JSONSnapshot>(
                    store: here.dataStore("flags"), name: "flags")
                let config = ConfigReader(providers: [flags])
                #expect(config.bool(forKey: "checkout.enabled", default: false) == false)
                let group = ServiceGroup(services: [flags], logger: Logger(label: "tests"))
                let running = Task { try await group.run() }
                let seen = try await config.watchBool(forKey: "checkout.enabled") { updates in
                    var seen: [Bool?] = []
                    for await enabled in updates {
                        seen.append(enabled)
                        if enabled == true { break }
                        try await there.dataStore("flags").save(ConfigDocuments.flags(checkout: true))
                    }
                    return seen
                }
                await group.triggerGracefulShutdown()
                try await running.value
                // Absent at first (the row does not exist yet), then the other machine's value.
                #expect(seen == [nil, true])
                #expect(config.bool(forKey: "checkout.enabled", default: false) == true)
            }
        }

        @Test func anUnreachableServerIsNeverAnEmptyConfiguration() async throws {
            let configuration = try PostgresServer.configuration(port: 1)
            try await PostgresServer.withClient(configuration: configuration) { client in
                var table = try PostgresValueTable(client: client, name: "value_store")
                table.connectTimeout = .milliseconds(300)
                let store = table.dataStore("flags")
                let error = try await #require(throws: ValueStoreError.self) {
                    _ = try await ValueStoreConfigProvider<JSONSnapshot>(store: store, name: "flags")
                }
                #expect(error.code == .unavailable)
            }
        }
    }
}
#endif
