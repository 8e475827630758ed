#if Configuration
public import Configuration
public import Foundation
public import Logging
public import Metrics
public import ValueStore
import Synchronization

/// A swift-configuration provider over any store of bytes: a file, a settings key, a PostgreSQL
/// row; it follows the store's changes, so a flag another instance flips reaches every
/// `ConfigReader` watching it.
///
/// ```swift
/// let flags = try await ValueStoreConfigProvider<JSONSnapshot>(
///     store: table.dataStore("flags"),  // any ValueStore<Void, Data>
///     name: "flags")
/// let config = ConfigReader(providers: [EnvironmentVariablesProvider(), flags])
/// try await ServiceGroup(services: [flags, server], logger: logger).run()  // follows store.changes()
/// let enabled = config.bool(forKey: "checkout.enabled", default: false)
/// ```
///
/// The store holds one document in the format of `Snapshot` (`JSONSnapshot`, `YAMLSnapshot`,
/// `PropertyListSnapshot`, or your own `FileConfigSnapshot`), parsed into the provider's current
/// snapshot:
///
/// - **Get** (``value(forKey:type:)``, ``snapshot()``) never suspends: it answers from the last
///   snapshot that parsed.
/// - **Fetch** (``fetchValue(forKey:type:)``) loads the store (a round trip for a remote store),
///   takes in what it finds as ``run()`` does, and answers from the result; a store that fails
///   or a document that does not parse throws, and the snapshot stays as it was.
/// - **Watch** (``watchValue(forKey:type:updatesHandler:)``, ``watchSnapshot(updatesHandler:)``)
///   yields the current value at once, then again whenever a new snapshot changes it; a watcher
///   of a key whose value did not change hears nothing.
/// - **Run** (``run()``, as a service of a `ServiceGroup`) follows the store's
///   ``/ValueStore/ValueStore/changes()``: each new value is parsed and swapped in.
///
/// > Important: A failure never empties the configuration. A store that fails to load
/// > (``/ValueStore/ValueStoreError/Code/corrupted``, ``/ValueStore/ValueStoreError/Code/decodingFailed``,
/// > ``/ValueStore/ValueStoreError/Code/unavailable``, a locked vault) or a document that does not
/// > parse keeps the last good snapshot, logs a warning and counts an error in the metric
/// > `valuestore.config.errors`. Only absence (``/ValueStore/ValueStoreError/Code/notFound``) is
/// > an empty configuration, and only when `allowMissing` is `true`.
public final class ValueStoreConfigProvider<Snapshot: FileConfigSnapshot>: Sendable {
    /// The name `AccessReporter`s and logs show: `ValueStoreConfigProvider<JSONSnapshot>[flags]`.
    public let providerName: String

    let store: ValueStore<Void, Data>
    private let name: String
    private let allowMissing: Bool
    private let isSecret: Bool
    private let parsingOptions: Snapshot.ParsingOptions
    private let logger: Logger
    private let metrics: any MetricsFactory
    let storage: Mutex<Storage>

    struct ValueWatcher {
        let type: ConfigType
        let continuation: AsyncStream<Result<LookupResult, any Error>>.Continuation
    }

    struct Storage {
        /// The last snapshot that parsed, or the empty one for absence.
        var snapshot: any ConfigSnapshot
        /// The bytes `snapshot` was parsed from; `nil` for absence.
        var data: Data?
        /// The newest load taken in, so an older one that finishes later is not.
        var applied: UInt64 = 0
        /// The number the next load gets.
        var nextLoad: UInt64 = 1
        var nextWatcher = 0
        var valueWatchers: [AbsoluteConfigKey: [Int: ValueWatcher]] = [:]
        var snapshotWatchers = StreamListeners<any ConfigSnapshot>()
    }

    /// A provider over `store`, loaded once before it returns.
    ///
    /// ```swift
    /// let flags = try await ValueStoreConfigProvider<JSONSnapshot>(
    ///     store: ValueStore<Void, Data>.file(url),
    ///     name: "flags")
    /// ```
    ///
    /// Over a store that ``/ValueStore/ValueStore/holdsSecrets`` (an encrypted one, mapped or not),
    /// or with `isSecret: true`, every value is marked `isSecret`, so `AccessLogger` and the other
    /// access reporters print it redacted. (A `Snapshot`'s own parsing options can mark some keys
    /// only, as `JSONSnapshot.ParsingOptions(secretsSpecifier:)` does.)
    ///
    /// - Parameters:
    ///   - store: The store of the document's bytes.
    ///   - name: What logs, metrics and `providerName` call the provider.
    ///   - allowMissing: Whether absence is an empty configuration (`true`, the default) or an
    ///     error.
    ///   - isSecret: Whether every value is a secret, for a store that does not say so itself.
    ///   - parsingOptions: How `Snapshot` parses the document.
    ///   - logger: Where failures that no caller can be told of are logged, at warning level.
    ///   - metrics: Where `valuestore.config.errors` is counted.
    /// - Throws: What the store's load throws, other than absence when `allowMissing` is `true`
    ///   (``/ValueStore/ValueStoreError/Code/notFound`` when it is `false`), or `Snapshot`'s
    ///   error for a document that does not parse.
    public init(
        store: ValueStore<Void, Data>,
        name: String,
        allowMissing: Bool = true,
        isSecret: Bool = false,
        parsingOptions: Snapshot.ParsingOptions = .default,
        logger: Logger = Logger(label: "ValueStoreConfiguration"),
        metrics: any MetricsFactory = MetricsSystem.factory
    ) async throws {
        self.store = store
        self.name = name
        self.allowMissing = allowMissing
        self.isSecret = isSecret || store.holdsSecrets
        self.parsingOptions = parsingOptions
        self.providerName = "ValueStoreConfigProvider<\(Snapshot.self)>[\(name)]"
        var logger = logger
        logger[metadataKey: "valuestore.store"] = .string(name)
        self.logger = logger
        self.metrics = metrics
        let state = await StoredState { try await store.load() }
        let (snapshot, data) = try Self.parse(
            state, providerName: providerName, allowMissing: allowMissing, isSecret: self.isSecret,
            parsingOptions: parsingOptions)
        storage = Mutex(Storage(snapshot: snapshot, data: data))
    }

    /// The snapshot a state stands for, and the bytes it was parsed from, or the state's error.
    private static func parse(
        _ state: StoredState<Data>,
        providerName: String,
        allowMissing: Bool,
        isSecret: Bool,
        parsingOptions: Snapshot.ParsingOptions
    ) throws -> (any ConfigSnapshot, Data?) {
        switch state {
        case .value(let data):
            let parsed = try Snapshot(data: data.bytes, providerName: providerName, parsingOptions: parsingOptions)
            return (isSecret ? SecretSnapshot(base: parsed) : parsed, data)
        case .absent:
            guard allowMissing else {
                throw ValueStoreError(
                    .notFound, store: providerName,
                    reason: "the store holds no configuration, and allowMissing is false")
            }
            return (EmptySnapshot(providerName: providerName), nil)
        case .failed(let error):
            throw error
        }
    }

    /// Takes in a state loaded as the `ticket`-th load, unless a newer load was taken in: parses
    /// it, swaps the snapshot and notifies the watchers of the keys whose value changed. A
    /// failure keeps the snapshot, is logged and counted, and is returned.
    @discardableResult
    func takeIn(_ state: StoredState<Data>, ticket: UInt64) -> (any Error)? {
        let unchanged = storage.withLock { storage in
            let unchanged =
                switch state {
                case .value(let data): storage.data == data
                case .absent: storage.data == nil && storage.snapshot is EmptySnapshot
                case .failed: false
                }
            if unchanged {
                // What this load found is current: an older load that finishes later is not.
                storage.applied = max(storage.applied, ticket)
            }
            return unchanged
        }
        if unchanged {
            return nil
        }
        let snapshot: any ConfigSnapshot
        let data: Data?
        do {
            (snapshot, data) = try Self.parse(
                state, providerName: providerName, allowMissing: allowMissing, isSecret: isSecret,
                parsingOptions: parsingOptions)
        } catch {
            record(error)
            return error
        }
        let (valueUpdates, snapshotUpdates) = storage.withLock {
            storage -> (
                [(ValueWatcher, Result<LookupResult, any Error>)], [AsyncStream<any ConfigSnapshot>.Continuation]
            ) in
            guard ticket > storage.applied else { return ([], []) }
            storage.applied = ticket
            let old = storage.snapshot
            storage.snapshot = snapshot
            storage.data = data
            var updates: [(ValueWatcher, Result<LookupResult, any Error>)] = []
            for (key, watchers) in storage.valueWatchers {
                for watcher in watchers.values {
                    let before = Result { try old.value(forKey: key, type: watcher.type) }
                    let after = Result { try snapshot.value(forKey: key, type: watcher.type) }
                    if Self.differ(before, after) {
                        updates.append((watcher, after))
                    }
                }
            }
            return (updates, storage.snapshotWatchers.all)
        }
        for (watcher, value) in valueUpdates {
            watcher.continuation.yield(value)
        }
        for continuation in snapshotUpdates {
            continuation.yield(snapshot)
        }
        logger.debug(
            "configuration updated",
            metadata: ["valuestore.config.changed_watchers": .stringConvertible(valueUpdates.count)])
        return nil
    }

    /// Whether a watcher must hear of the change from `before` to `after`: two values that
    /// differ, or a value and a failure; two failures are no news.
    private static func differ(_ before: Result<LookupResult, any Error>, _ after: Result<LookupResult, any Error>)
        -> Bool
    {
        switch (before, after) {
        case (.success(let before), .success(let after)): before != after
        case (.failure, .failure): false
        default: true
        }
    }

    /// Logs and counts a failure that kept the last good snapshot. Only the error's type goes
    /// out, never its description, which may quote the document.
    private func record(_ error: any Error) {
        let type = Self.errorType(error)
        logger.warning(
            "kept the last good configuration: the store's value could not be loaded or parsed",
            metadata: ["error.type": .string(type)])
        Counter(
            label: "valuestore.config.errors",
            dimensions: [("valuestore.store", name), ("error.type", type)],
            factory: metrics
        )
        .increment()
    }

    /// The ``/ValueStore/ValueStoreError``'s code, or the error's type name.
    private static func errorType(_ error: any Error) -> String {
        if let error = error as? ValueStoreError {
            return error.code.rawValue
        }
        return String(reflecting: type(of: error))
    }

    /// A number for a load about to start; loads are taken in in this order.
    func ticket() -> UInt64 {
        storage.withLock { storage in
            defer { storage.nextLoad += 1 }
            return storage.nextLoad
        }
    }
}
#endif
