import Foundation

/// One key of one UserDefaults suite, and how the store reads and writes it.
struct UserDefaultsKey: Sendable {
    let key: String
    let suiteName: String?
    let label: String
    /// The suite, or the standard defaults. UserDefaults is thread-safe but not `Sendable` on
    /// every platform, so the store reaches it through a lock.
    let suite: Locked<UserDefaults>

    init(_ key: String, suiteName: String?) {
        self.key = key
        self.suiteName = suiteName
        label = "UserDefaults key '\(key)'" + (suiteName.map { " in suite '\($0)'" } ?? "")
        suite = Locked(suiteName.flatMap(UserDefaults.init(suiteName:)) ?? .standard)
        identity = "\(suiteName ?? "")\u{0}\(key)"
    }

    /// A key of a given UserDefaults instance, for the deprecated names that take one; its
    /// registered defaults are told apart only on Apple platforms.
    init(_ key: String, defaults: sending UserDefaults) {
        self.key = key
        suiteName = nil
        label = "UserDefaults key '\(key)'"
        suite = Locked(defaults)
        identity = "\u{0}\(key)"
    }

    /// One broadcaster per suite and key, so every store of a key in this process hears every
    /// other's writes.
    private static let broadcasters = Locked<[String: ChangeBroadcaster]>([:])

    /// The signals of this key's writes through any of its stores in this process.
    var changes: ChangeBroadcaster {
        Self.broadcasters.withLock { broadcasters in
            if let broadcaster = broadcasters[identity] {
                return broadcaster
            }
            let broadcaster = ChangeBroadcaster()
            broadcasters[identity] = broadcaster
            return broadcaster
        }
    }

    /// Keys this process removed, whose registered defaults must not read as stored values on
    /// platforms that do not expose the registration domain.
    static let removed = Locked<Set<String>>([])

    /// The suite and the key, as one string.
    private let identity: String

    func load<Value: PropertyListValue>(as type: Value.Type) throws -> Value {
        guard let value = try loadIfPresent(as: type) else {
            throw ValueStoreError(.notFound, store: label)
        }
        return value
    }

    func loadIfPresent<Value: PropertyListValue>(as type: Value.Type) throws -> Value? {
        try suite.withLock { defaults in
            guard let object = storedObject(in: defaults) else {
                return nil
            }
            guard let value = Value(propertyListObject: object) else {
                throw ValueStoreError(
                    .decodingFailed, store: label,
                    reason: "the stored value is \(Self.describe(object)), not \(Value.self)")
            }
            return value
        }
    }

    /// The stored value as a property-list node, keeping its type; `nil` when none is stored.
    func storedNode() throws -> PropertyListNode? {
        try suite.withLock { defaults in
            guard let object = storedObject(in: defaults) else {
                return nil
            }
            guard let node = PropertyListNode(object: object) else {
                throw ValueStoreError(
                    .decodingFailed, store: label, reason: "the stored value is not a property-list value")
            }
            return node
        }
    }

    /// The object stored for the key, or `nil` when none is, however a default is registered.
    private func storedObject(in defaults: UserDefaults) -> Any? {
        guard let object = defaults.object(forKey: key), isStored(in: defaults) else {
            return nil
        }
        return object
    }

    /// Whether the value `object(forKey:)` found is stored, not only registered.
    private func isStored(in defaults: UserDefaults) -> Bool {
        #if canImport(Darwin)
        guard defaults.volatileDomain(forName: UserDefaults.registrationDomain)[key] != nil else { return true }
        #else
        guard Self.removed.withLock({ $0.contains(identity) }) else { return true }
        #endif
        let domain = suiteName ?? Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
        return defaults.persistentDomain(forName: domain)?[key] != nil
    }

    /// Stores `value`, or removes the key for `nil`, off the caller's executor: on Linux the
    /// write ends in a blocking file write, so the stores call it on the I/O threads
    /// (`BlockingIO.run`).
    @concurrent func store<Value: PropertyListValue>(_ value: Value?) async throws {
        try suite.withLock { defaults in try store(value, in: defaults) }
    }

    /// Removes the key, off the caller's executor.
    @concurrent func removeValue() async throws {
        try suite.withLock { defaults in try store(Int?.none, in: defaults) }
    }

    private func store<Value: PropertyListValue>(_ value: Value?, in defaults: UserDefaults) throws {
        #if !canImport(Darwin)
        // Foundation on Linux writes UserDefaults as an XML property list, whose dates hold whole
        // seconds: a date with a fraction would read back different in the next process.
        if let value, PropertyListNode(object: value.propertyListObject)?.containsInexactDate == true {
            throw ValueStoreError(
                .encodingFailed, store: label,
                reason:
                    "Foundation on Linux keeps UserDefaults in an XML property list, which holds dates to whole seconds;"
                    + " round the date, or keep it in a settings file; nothing changed")
        }
        // Foundation on Linux writes its property-list file only when asked; if that fails, the
        // value stored before is put back, so a failed save leaves it as it was.
        let previous = storedObject(in: defaults)
        #endif
        if let value {
            defaults.set(value.propertyListObject, forKey: key)
        } else {
            defaults.removeObject(forKey: key)
        }
        #if !canImport(Darwin)
        guard defaults.synchronize() else {
            if let previous {
                defaults.set(previous, forKey: key)
            } else {
                defaults.removeObject(forKey: key)
            }
            throw ValueStoreError(.io, store: label, reason: "UserDefaults could not write its file; nothing changed")
        }
        #endif
        if value == nil {
            _ = Self.removed.withLock { $0.insert(identity) }
        } else {
            _ = Self.removed.withLock { $0.remove(identity) }
        }
        changes.signal()
    }

    /// This process's lock of each key, by ``identity``.
    private static let locks = KeyedLocks<String>()

    /// Runs `body` holding this process's lock for the key.
    nonisolated(nonsending) func exclusively<Result>(
        _ body: nonisolated(nonsending) () async throws -> Result
    ) async throws -> Result {
        try await Self.locks.withLock(identity, body)
    }

    /// A stored object's type in words, for errors; never its content.
    static func describe(_ object: Any) -> String {
        switch PropertyListNode(object: object) {
        case .boolean?: "a Boolean"
        case .integer?, .unsignedInteger?: "an integer"
        case .real?: "a real number"
        case .string?: "a string"
        case .data?: "data"
        case .date?: "a date"
        case .array?: "an array"
        case .dictionary?: "a dictionary"
        case .uid?: "a keyed-archiver UID"
        case nil: "not a property-list value"
        }
    }
}
