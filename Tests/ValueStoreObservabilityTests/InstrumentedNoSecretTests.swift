#if Observability
import Foundation
import InMemoryLogging
import InMemoryTracing
import Logging
import Synchronization
import Testing
import Tracing
import ValueStore
import ValueStoreObservability

/// Nothing an instrumented store emits carries a value, a decrypted byte, a key an app's user
/// chose or a file's path, for every local backend, through its successes and its failures.
/// (The PostgreSQL backend's run is in ValueStorePostgresTests, against a real server.)
@Suite struct InstrumentedNoSecretTests {
    /// A backend under test: a store of a string under a key a user chose, and a way to make its
    /// next load fail with something other than absence.
    struct Backend: Sendable, CustomTestStringConvertible {
        let name: String
        let make:
            @Sendable (_ directory: URL, _ key: String, _ secret: String) throws -> (
                store: ValueStore<Void, String>, damage: Damage
            )
        typealias Damage = @Sendable (_ secret: String) async throws -> Void

        var testDescription: String { name }
    }

    static let backends: [Backend] = [
        Backend(name: "inMemory") { _, _, _ in
            let memory = ValueStore<Void, String>.inMemory()
            let broken = Flag()
            let store = ValueStore<Void, String>(
                label: "memory",
                load: { _ in
                    if broken.isSet { throw ValueStoreError(.corrupted, store: "memory", reason: "damaged") }
                    return try await memory.load()
                },
                save: { value, _ in try await memory.save(value) },
                remove: { _ in try await memory.remove() },
                update: { _, body in try await memory.update((), body) })
            return (store, { _ in broken.set() })
        },
        Backend(name: "failing, its error quoting the value") { directory, key, secret in
            let error = ValueStoreError(.io, store: "file '\(directory.path)/\(key)'", reason: "it held \(secret)")
            return (.failing(error), { _ in })
        },
        Backend(name: "file") { directory, key, _ in
            let url = directory.appending(path: key)
            return (
                ValueStore<Void, Data>.file(url).coded(.utf8),
                { _ in try Data([0xFF, 0xFE, 0xFD]).write(to: url) }
            )
        },
        Backend(name: "jsonFile") { directory, key, _ in
            let url = directory.appending(path: "\(key).json")
            return (.jsonFile(url), { secret in try Data(#"{"\#(secret)": "#.utf8).write(to: url) })
        },
        Backend(name: "plistFile") { directory, key, _ in
            let url = directory.appending(path: "\(key).plist")
            return (.plistFile(url), { secret in try Data("<plist>\(secret)".utf8).write(to: url) })
        },
        Backend(name: "encryptedFile") { directory, key, _ in
            let vault = KeyVault()
            vault.unlock(with: EncryptionKey.random())
            return (.encryptedFile(directory.appending(path: key), vault: vault), { _ in vault.lock() })
        },
        Backend(name: "SettingsFile key") { directory, key, _ in
            let settings = SettingsFile(directory.appending(path: "settings.plist"))
            // The key now holds a date, which does not decode as a string.
            return (
                settings.store(key, as: String.self), { _ in try await settings.store(key, as: Date.self).save(Date()) }
            )
        },
        Backend(name: "userDefaults") { directory, key, _ in
            let suite = "ValueStoreObservabilityTests.\(UUID().uuidString)"
            return (
                .userDefaults(key, suiteName: suite),
                { _ in UserDefaults(suiteName: suite)!.set(Date(), forKey: key) }
            )
        },
    ]

    @Test(arguments: backends)
    func nothingEmittedCarriesAValueAKeyOrAPath(_ backend: Backend) async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "observability-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = "alice-\(UUID().uuidString.prefix(8))"
        let secret = "s3cr3t-\(UUID().uuidString)"
        let changed = "hunter2-\(UUID().uuidString)"
        let (bare, damage) = try backend.make(directory, key, secret)
        let emitted = Emitted()
        let store = bare.instrumented(
            as: "profile", logger: emitted.logger, metrics: emitted.metrics, tracer: emitted.tracer)

        var operations = 0
        func attempt(_ body: () async throws -> Void) async {
            operations += 1
            do { try await body() } catch {}
        }
        await attempt { _ = try await store.load() }
        await attempt { try await store.save(secret) }
        await attempt { _ = try await store.load() }
        await attempt { _ = try await store.update { $0 = changed } }
        await attempt { try await damage(secret) }
        operations -= 1
        let failure = await #expect(throws: (any Error).self) { try await bare.load() }
        await attempt { _ = try await store.load() }
        await attempt { _ = try await store.update { $0 = secret } }
        await attempt { try await store.save(secret) }
        await attempt { try await store.remove() }

        let secrets = [secret, changed, key, directory.path(percentEncoded: false), "hunter2", "s3cr3t"]
        #expect(emitted.leaks(of: secrets) == [])
        #expect(emitted.tracer.finishedSpans.count == operations)
        // One entry per operation (events the core reports for other tests may come too).
        #expect(emitted.logs.entries.count { $0.metadata["valuestore.operation"] != nil } == operations)
        let expected = (failure as? ValueStoreError)?.code.rawValue
        #expect(expected != nil, "the damaged load throws a ValueStoreError")
        #expect(
            emitted.tracer.finishedSpans.contains { span in
                span.operationName == "valuestore.load" && span.attributes.get("error.type") == .string(expected ?? "")
            })
        for span in emitted.tracer.finishedSpans {
            #expect(span.attributes.get("valuestore.store") == "profile")
            #expect(span.errors.isEmpty)
        }
    }

    /// A directory's watch lost (the directory deleted, then made again) is logged with the
    /// instrumented store's name and the event's kind, never the directory's path, which here
    /// names a user. The live watcher, not a fake: the event is the one an app would log.
    @Test func aWatchEventNamesTheInstrumentedStoreNeverThePath() async throws {
        let emitted = Emitted()
        let root = FileManager.default.temporaryDirectory.appending(path: "alice.smith-\(UUID().uuidString)")
        let directory = root.appending(path: "Preferences")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let store = ValueStore<Void, Int>.jsonFile(directory.appending(path: "count.json"))
            .instrumented(as: "count", logger: emitted.logger, metrics: emitted.metrics, tracer: emitted.tracer)
        try await store.save(1)
        var states = store.changes().makeAsyncIterator()
        #expect(await states.next()?.value == 1, "watching")
        let named = { (kind: String) in
            emitted.logs.entries.filter {
                $0.metadata["valuestore.event"] == .string(kind) && $0.metadata["valuestore.store"] == "count"
            }
        }
        try FileManager.default.removeItem(at: directory)
        #expect(try await Self.within(seconds: 10) { !named("watchLost").isEmpty }, "\(emitted.logs.entries)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        #expect(try await Self.within(seconds: 10) { !named("watchRestored").isEmpty }, "\(emitted.logs.entries)")
        #expect(named("watchLost").allSatisfy { $0.metadata["valuestore.source"] == "count" })
        #expect(emitted.leaks(of: [root.path(percentEncoded: false), "alice.smith"]) == [])
    }

    /// Whether `condition` holds within `seconds`, checked every 20 ms: for the live watcher,
    /// which sends the test no event of its own.
    static func within(seconds: Double, _ condition: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(20))
        }
        return true
    }
}

/// A flag one closure sets and another reads.
final class Flag: Sendable {
    private let storage = Atomic<Bool>(false)
    var isSet: Bool { storage.load(ordering: .acquiring) }
    func set() { storage.store(true, ordering: .releasing) }
}
#endif
