#if PostgreSQL && Observability
import Foundation
import InMemoryLogging
import InMemoryTracing
import Logging
import MetricsTestKit
import PostgresNIO
import Testing
import Tracing
import ValueStore
import ValueStoreObservability
import ValueStorePostgres

extension PostgresTests {
    /// An instrumented PostgreSQL store: client spans, and nothing emitted that carries a value, a
    /// key a user chose, a password or the server's address, failures included.
    @Suite struct Observability {
        @Test func nothingEmittedCarriesAValueAKeyAPasswordOrAConnectionString() async throws {
            let logs = InMemoryLogHandler()
            let metrics = TestMetrics()
            let tracer = InMemoryTracer()
            let logger = Logger(label: "postgres \(UUID().uuidString)") { _ in
                var handler = logs
                handler.logLevel = .trace
                return handler
            }
            let key = "alice-\(UUID().uuidString.prefix(8))"
            let secret = "s3cr3t-\(UUID().uuidString)"
            try await PostgresServer.withClient { client in
                let table = try await PostgresServer.scratchTable(client)
                let profiles = table.store(as: String.self).instrumented(
                    as: "profiles", logger: logger, metrics: metrics, tracer: tracer)
                _ = try? await profiles.load(key)
                _ = try await profiles.save(secret, key)
                _ = try await profiles.load(key)
                _ = try await profiles.update(key) { $0 = secret + "!" }
                // Bytes another program wrote, quoting the secret, that do not decode.
                try await table.dataStore(key).save(Data(#"{"\#(secret)": "#.utf8))
                await #expect(throws: ValueStoreError.self) { try await profiles.load(key) }
                try await profiles.remove(key)
            }
            let password = "p4ssw0rd-\(UUID().uuidString.prefix(8))"
            try await PostgresServer.withClient(
                configuration: PostgresServer.configuration(port: 1, password: password)
            ) {
                client in
                var table = try PostgresValueTable(client: client, name: "value_store")
                table.connectTimeout = .milliseconds(300)
                let flags = table.store(key, as: String.self).instrumented(
                    as: "flags", logger: logger, metrics: metrics, tracer: tracer)
                await #expect(throws: ValueStoreError(.unavailable)) { try await flags.load() }
            }

            let environment = ProcessInfo.processInfo.environment
            var secrets = [secret, key, password, "s3cr3t", "postgres://"]
            secrets += ["PGPASSWORD", "PGHOST"].compactMap { environment[$0] }.filter { !$0.isEmpty }
            var texts: [String] = logs.entries.map { "\($0.level) \($0.message) \($0.metadata)" }
            texts += metrics.counters.map { "\($0.label) \($0.dimensions)" }
            texts += metrics.timers.map { "\($0.label) \($0.dimensions)" }
            for span in tracer.finishedSpans {
                var text = "\(span.operationName) \(String(describing: span.status)) \(span.errors.count)"
                // swift-format-ignore: ReplaceForEachWithForLoop
                span.attributes.forEach { name, value in text += " \(name)=\(value)" }
                texts.append(text)
            }
            #expect(texts.filter { text in secrets.contains { text.contains($0) } } == [])
            let spans = tracer.finishedSpans
            #expect(spans.count == 7)
            #expect(spans.allSatisfy { $0.kind == .client })
            #expect(spans.contains { $0.attributes.get("error.type") == "decodingFailed" })
            #expect(spans.contains { $0.attributes.get("error.type") == "unavailable" })
        }
    }
}
#endif
