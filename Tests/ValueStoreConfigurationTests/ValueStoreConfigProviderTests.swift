#if Configuration
import Configuration
import ConfigurationTesting
import Foundation
import InMemoryLogging
import Logging
import MetricsTestKit
import Synchronization
import Testing
import ValueStore
import ValueStoreConfiguration
import ValueStoreTestSupport

@Suite struct ValueStoreConfigProviderTests {
    @Test func passesSwiftConfigurationsProviderCompatTestInMemory() async throws {
        let provider = try await ValueStoreConfigProvider<JSONSnapshot>(
            store: .inMemory(ConfigDocuments.compat), name: "compat")
        try await ProviderCompatTest(provider: provider).runTest()
        #expect(provider.providerName == "ValueStoreConfigProvider<JSONSnapshot>[compat]")
    }

    @Test func absenceIsAnEmptyConfigurationWhenAllowed() async throws {
        let provider = try await ValueStoreConfigProvider<JSONSnapshot>(store: .inMemory(), name: "flags")
        let config = ConfigReader(provider: provider)
        #expect(config.bool(forKey: "checkout.enabled", default: false) == false)
        #expect(try provider.value(forKey: ["checkout", "enabled"], type: .bool).value == nil)
    }

    @Test func absenceThrowsNotFoundWhenNotAllowed() async throws {
        await #expect(throws: ValueStoreError.notFound) {
            _ = try await ValueStoreConfigProvider<JSONSnapshot>(store: .inMemory(), name: "flags", allowMissing: false)
        }
    }

    @Test(arguments: [ValueStoreError.Code.corrupted, .decodingFailed, .unavailable])
    func damageIsNeverTakenForAbsence(code: ValueStoreError.Code) async throws {
        let error = await #expect(throws: ValueStoreError.self) {
            _ = try await ValueStoreConfigProvider<JSONSnapshot>(
                store: .failing(ValueStoreError(code)), name: "flags", allowMissing: true)
        }
        #expect(error?.code == code)
    }

    @Test func aDocumentThatDoesNotParseThrowsAtFirst() async throws {
        await #expect(throws: (any Error).self) {
            _ = try await ValueStoreConfigProvider<JSONSnapshot>(store: .inMemory(Data("{".utf8)), name: "flags")
        }
    }

    @Test func fetchLoadsTheStoreAndNotifiesOnlyTheWatchersOfKeysThatChanged() async throws {
        let store = ValueStore<Void, Data>.inMemory(ConfigDocuments.flags(checkout: false, banner: "none"))
        let provider = try await ValueStoreConfigProvider<JSONSnapshot>(store: store, name: "flags")
        let banner = Collected<ConfigContent?>()
        let watchingBanner = Task {
            try await provider.watchValue(forKey: ["banner"], type: .string) { updates in
                for await update in updates {
                    banner.append(try update.get().value?.content)
                }
            }
        }
        defer { watchingBanner.cancel() }
        let checkout = try await provider.watchValue(forKey: ["checkout", "enabled"], type: .bool) { updates in
            var iterator = updates.makeAsyncIterator()
            let first = try await iterator.next()?.get().value?.content
            try await store.save(ConfigDocuments.flags(checkout: true, banner: "none"))
            // Nothing is read from the store until something asks: the snapshot is as it was.
            #expect(try provider.value(forKey: ["checkout", "enabled"], type: .bool).value?.content == .bool(false))
            _ = try await provider.fetchValue(forKey: ["checkout", "enabled"], type: .bool)
            let second = try await iterator.next()?.get().value?.content
            return [first, second]
        }
        #expect(checkout == [.bool(false), .bool(true)])
        #expect(await eventually { banner.values.count == 1 })
        try await store.save(ConfigDocuments.flags(checkout: true, banner: "sale"))
        _ = try await provider.fetchValue(forKey: ["banner"], type: .string)
        #expect(await eventually { banner.values.count == 2 })
        // The banner's watcher heard its first value and its change, and nothing of the checkout.
        #expect(banner.values == [.string("none"), .string("sale")])
    }

    @Test func aFailureOrAParseErrorKeepsTheLastGoodSnapshotAndIsLoggedAndCounted() async throws {
        let store = ValueStore<Void, Data>.inMemory(ConfigDocuments.flags(checkout: true))
        let logs = InMemoryLogHandler()
        let metrics = TestMetrics()
        let provider = try await ValueStoreConfigProvider<JSONSnapshot>(
            store: store, name: "flags", logger: Logger(label: "config") { _ in logs }, metrics: metrics)
        let config = ConfigReader(provider: provider)
        let running = Task { try await provider.run() }
        defer { running.cancel() }

        try await store.save(Data(#"{"checkout": {"enabled": fal"#.utf8))
        #expect(await eventually { metrics.counters(label: "valuestore.config.errors").count == 1 })
        #expect(config.bool(forKey: "checkout.enabled", default: false) == true)
        await #expect(throws: (any Error).self) { _ = try await config.fetchBool(forKey: "checkout.enabled") }
        #expect(config.bool(forKey: "checkout.enabled", default: false) == true)

        let warnings = logs.entries.filter { $0.level == .warning }
        #expect(!warnings.isEmpty)
        for warning in warnings {
            #expect(warning.metadata["valuestore.store"] == "flags")
            #expect(!"\(warning.message)\(warning.metadata)".contains("fal"))
        }
        let errors = try #require(metrics.counters(label: "valuestore.config.errors").first)
        #expect(errors.dimensions.contains { $0 == ("valuestore.store", "flags") })
        // One from following the store, one from the fetch.
        #expect(metrics.counterTotal(label: "valuestore.config.errors") == 2)
    }

    @Test func aStoreThatFailsWhileFollowedKeepsTheConfigurationAndFollowingGoesOn() async throws {
        let store = SwitchableStore(ConfigDocuments.flags(checkout: false))
        let metrics = TestMetrics()
        let provider = try await ValueStoreConfigProvider<JSONSnapshot>(
            store: store.store, name: "flags", metrics: metrics)
        let running = Task { try await provider.run() }
        defer { running.cancel() }
        try await store.fail(with: ValueStoreError(.corrupted))
        #expect(await eventually { !metrics.counters(label: "valuestore.config.errors").isEmpty })
        #expect(try provider.value(forKey: ["checkout", "enabled"], type: .bool).value?.content == .bool(false))
        try await store.save(ConfigDocuments.flags(checkout: true))
        #expect(
            await eventually {
                (try? provider.value(forKey: ["checkout", "enabled"], type: .bool).value?.content) == .bool(true)
            })
    }

    @Test func aFlagFlippedInTheStoreReachesAConfigReaderWatcher() async throws {
        let store = ValueStore<Void, Data>.inMemory(ConfigDocuments.flags(checkout: false))
        let provider = try await ValueStoreConfigProvider<JSONSnapshot>(store: store, name: "flags")
        let config = ConfigReader(providers: [provider])
        let running = Task { try await provider.run() }
        defer { running.cancel() }
        let seen = try await config.watchBool(forKey: "checkout.enabled") { updates in
            var seen: [Bool?] = []
            for await enabled in updates {
                seen.append(enabled)
                if enabled == false {
                    try await store.save(ConfigDocuments.flags(checkout: true))
                } else {
                    break
                }
            }
            return seen
        }
        #expect(seen == [false, true])
    }

    @Test func anEncryptedStoresValuesAreSecretsThatAccessLogsRedact() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let vault = KeyVault()
        vault.unlock(with: EncryptionKey.random())
        let secrets = ValueStore<Void, Data>.encryptedFile(directory.appending(path: "secrets"), vault: vault)
        try await secrets.save(Data(#"{"database": {"password": "hunter2"}}"#.utf8))
        let provider = try await ValueStoreConfigProvider<JSONSnapshot>(store: secrets, name: "secrets")
        let accesses = RecordedAccesses()
        let config = ConfigReader(provider: provider, accessReporter: accesses)
        #expect(config.string(forKey: "database.password") == "hunter2")
        let value = try provider.value(forKey: ["database", "password"], type: .string).value
        #expect(value?.isSecret == true)
        // What access reporters print, AccessLogger among them (swift-configuration's `Logging`
        // trait): the event's summary and the value's description.
        #expect(accesses.summaries.count == 1)
        #expect(accesses.summaries.allSatisfy { !$0.contains("hunter2") && $0.contains("REDACTED") })
    }

    /// "Holds secrets" is the store's, and its combinators keep it: a provider over an encrypted
    /// store marks every value secret with no flag, mapped or not, and over a plain file only
    /// when asked to.
    @Test func anEncryptedStoreIsSecretThroughItsCombinatorsAndAPlainOneOnlyWhenAsked() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let vault = KeyVault()
        vault.unlock(with: EncryptionKey.random())
        let document = Data(#"{"database": {"password": "hunter2"}}"#.utf8)
        let encrypted = ValueStore<Void, Data>.encryptedFile(directory.appending(path: "secrets"), vault: vault)
        try await encrypted.save(document)
        let plain = ValueStore<Void, Data>.file(directory.appending(path: "plain.json"))
        try await plain.save(document)
        let stores: [(store: ValueStore<Void, Data>, secret: Bool, isSecret: Bool)] = [
            (encrypted.map(load: { $0 }, save: { $0 }).cached().default(Data("{}".utf8)), true, false),
            (plain, false, false),
            (plain, true, true),
        ]
        for (store, secret, isSecret) in stores {
            #expect(store.holdsSecrets == (secret && !isSecret))
            let provider = try await ValueStoreConfigProvider<JSONSnapshot>(
                store: store, name: "secrets", isSecret: isSecret)
            let value = try provider.value(forKey: ["database", "password"], type: .string).value
            #expect(value?.isSecret == secret, "\(store.label)")
        }
    }

    @Test func runEndsWhenItsTaskIsCancelled() async throws {
        let provider = try await ValueStoreConfigProvider<JSONSnapshot>(
            store: .inMemory(ConfigDocuments.flags(checkout: true)), name: "flags")
        let running = Task { try await provider.run() }
        running.cancel()
        try await running.value
    }
}

/// What a `ConfigReader` reported of each access, as access reporters print it.
final class RecordedAccesses: AccessReporter {
    private let events = Mutex<[String]>([])

    func report(_ event: AccessEvent) {
        let summary = "\(event)"
        events.withLock { $0.append(summary) }
    }

    var summaries: [String] { events.withLock { $0 } }
}

/// Values a watcher's task collects, read by the test.
final class Collected<Value: Sendable>: Sendable {
    private let storage = Mutex<[Value]>([])

    func append(_ value: Value) {
        storage.withLock { $0.append(value) }
    }

    var values: [Value] { storage.withLock { $0 } }
}

/// An in-memory store of bytes that a test can make fail, as a damaged file or a lost server
/// would, and heal again; each switch signals its observers.
final class SwitchableStore: Sendable {
    private let bytes: ValueStore<Void, Data>
    private let failure = Mutex<ValueStoreError?>(nil)

    init(_ data: Data) {
        bytes = .inMemory(data)
    }

    var store: ValueStore<Void, Data> {
        ValueStore(
            label: "switchable",
            load: { [self] _ in
                if let error = failure.withLock({ $0 }) { throw error }
                return try await bytes.load()
            },
            save: { [bytes] value, _ in try await bytes.save(value) },
            remove: { [bytes] _ in try await bytes.remove() },
            changeSignals: bytes.changeSignals)
    }

    /// Makes every load throw `error` from now on, and signals.
    func fail(with error: ValueStoreError) async throws {
        let current = try await bytes.load()
        failure.withLock { $0 = error }
        try await bytes.save(current)
    }

    /// Saves `data` and heals the store.
    func save(_ data: Data) async throws {
        failure.withLock { $0 = nil }
        try await bytes.save(data)
    }
}
#endif
