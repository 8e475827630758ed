#if PostgreSQL && Configuration
import Configuration
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Testing
import ValueStore
import ValueStoreConfiguration
import ValueStorePostgres

extension PostgresTests {
    /// The Configuration guide's live flag over PostgreSQL, end to end, as the guide shows it.
    @Suite struct ConfigurationGuideExamples {
        @Test func aLiveFlagOverPostgreSQL() async throws {
            let logger = Logger(label: "guide")
            try await PostgresServer.withTwoClients { client, other in
                let otherInstance = try PostgresValueTable(client: other, name: "app_values")
                try await otherInstance.createIfNeeded()
                try await otherInstance.dataStore("flags").remove()

                let table = try PostgresValueTable(client: client, name: "app_values")
                try await table.createIfNeeded()
                let flags = try await ValueStoreConfigProvider<JSONSnapshot>(
                    store: table.dataStore("flags"),
                    name: "flags")
                let config = ConfigReader(providers: [EnvironmentVariablesProvider(), flags])
                let group = ServiceGroup(services: [flags], logger: logger)  // the app's other services beside it

                let running = Task { try await group.run() }
                let enabled = config.bool(forKey: "checkout.enabled", default: false)
                #expect(enabled == false)
                var seen: [Bool?] = []
                let flipping = Task {
                    try await otherInstance.dataStore("flags").save(Data(#"{"checkout": {"enabled": true}}"#.utf8))
                }
                try await config.watchBool(forKey: "checkout.enabled") { updates in
                    for await enabled in updates {
                        seen.append(enabled)  // nil (no row yet), then true once another instance flips it
                        if enabled == true { break }
                    }
                }
                _ = try await flipping.value
                #expect(seen.last == true)
                await group.triggerGracefulShutdown()
                try await running.value
                // The PostgreSQL guide's examples keep `Flags` in this row.
                try await otherInstance.dataStore("flags").remove()
            }
        }
    }
}
#endif
