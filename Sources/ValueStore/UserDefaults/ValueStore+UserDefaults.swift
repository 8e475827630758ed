import Foundation

extension ValueStore where Environment == Void, Value: PropertyListValue {
    /// A store of one UserDefaults key, strict about absence and types.
    ///
    /// ```swift
    /// let launches = ValueStore<Void, Int>.userDefaults("launchCount")
    /// let profile = ValueStore<Void, Data>.userDefaults("profile", suiteName: "group.example").coded(.json)
    /// ```
    ///
    /// - **Only property-list types compile** (``PropertyListValue``); store other `Codable`
    ///   values as `Data` with ``coded(_:)``.
    /// - **Absence is `notFound`**, and a value of another type is
    ///   ``ValueStoreError/Code/decodingFailed``, never absence: a stored `1` is not a `Bool`.
    /// - **Registered defaults are not stored values.** After ``remove``, `load` throws
    ///   ``ValueStoreError/notFound`` even when `register(defaults:)` registered one. On Apple
    ///   platforms a value that only the registration domain holds is absent too; Foundation on
    ///   Linux does not expose that domain, so there a registered default reads as stored until
    ///   this process saves or removes the key.
    /// - **Changes.** ``changes()`` reports the writes made through any `userDefaults` store of
    ///   the key in this process; not writes made by other code or other processes.
    /// - **Reads** run on the caller's executor, as UserDefaults reads are made to; writes move
    ///   off it.
    /// - **Writes** are atomic within the process: `update` holds a lock that this process's
    ///   saves and removes of the key take too. UserDefaults promises no durability and no
    ///   atomicity across processes; on Linux the store calls `synchronize()` after each write.
    /// - **Dates on Linux.** Foundation on Linux writes UserDefaults as XML, whose dates hold whole
    ///   seconds: a date with a fraction is refused with ``ValueStoreError/Code/encodingFailed``
    ///   rather than read back different by the next process.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - suiteName: The suite, such as an app group; `nil` for `UserDefaults.standard`.
    /// - Returns: A store of the key's value.
    public static func userDefaults(_ key: String, suiteName: String? = nil) -> Self {
        userDefaults(UserDefaultsKey(key, suiteName: suiteName))
    }

    /// The store of one key, however it names its suite. Its writes run on the I/O threads
    /// (see `BlockingIO`): on Linux, Foundation writes the suite's file in `synchronize()`.
    static func userDefaults(_ defaults: UserDefaultsKey) -> Self {
        Self(
            label: defaults.label,
            load: { _ in try defaults.load(as: Value.self) },
            save: { value, _ in
                try await defaults.exclusively { try await defaults.write(value) }
                return value
            },
            remove: { _ in
                try await defaults.exclusively { try await defaults.write(Value?.none) }
            },
            update: { _, body in
                try await defaults.exclusively {
                    var value = try defaults.loadIfPresent(as: Value.self)
                    try await body(&value)
                    try await defaults.write(value)
                    return value
                }
            },
            changeSignals: { _ in defaults.changes.signals() }
        )
    }
}

extension UserDefaultsKey {
    /// Stores `value`, or removes the key for `nil`, on the I/O threads (see `BlockingIO`).
    fileprivate func write<Value: PropertyListValue>(_ value: Value?) async throws {
        try await BlockingIO.run { try await store(value) }
    }
}
