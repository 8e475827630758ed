public import Foundation

extension ValueStore where Value == Data {
    /// A store of a ``VersionedValue`` over a store of bytes: it stores the schema version
    /// beside the value, migrates older data on load, and refuses to overwrite newer data.
    ///
    /// ```swift
    /// let settings = ValueStore<Void, Data>.file(url).versioned(Settings.self)
    /// let legacy = ValueStore<Void, Data>.file(url).versioned(Settings.self, legacyVersion: 1)
    /// ```
    ///
    /// It works over any store of `Data`: a raw file, an encrypted file, an in-memory store.
    /// The value is stored as JSON in an envelope that carries its version,
    /// `{"version":2,"value":{"first":"Ada","last":"Lovelace"}}`: the characters `{"version":`,
    /// the version in decimal, `,"value":`, the value as a `JSONEncoder` with `.sortedKeys`
    /// encodes it, and `}`.
    ///
    /// - **Load** decodes data of the current version directly, in one pass over the JSON. Data
    ///   of an older version is decoded as that version's type, then migrated one step at a time
    ///   with each `init(migrating:)`, in memory. Loading never writes; the next save or update
    ///   stores the current version.
    /// - **Newer data**, stored by a version above `Value.version`, throws
    ///   ``ValueStoreError/Code/newerVersion``, never ``ValueStoreError/Code/notFound``, so
    ///   ``default(_:)`` and ``optional()`` do not hide it.
    /// - **Save, update and remove** run through the base store's `update`: they read the
    ///   current bytes under the lock writers take (across processes, for files), and over
    ///   newer data they throw ``ValueStoreError/Code/newerVersion`` and write nothing.
    ///
    /// > Important: An older app never destroys data a newer app wrote. To reset such data on
    /// > purpose, remove it through the unversioned base store.
    ///
    /// - Parameters:
    ///   - type: The current version of the value.
    ///   - legacyVersion: The version to read data without an envelope as: data saved as bare
    ///     JSON (with `jsonFile`, say) before the app versioned it. Without it, such data throws
    ///     ``ValueStoreError/Code/corrupted``.
    /// - Returns: A store of the current version; `update` through it stays atomic.
    public func versioned<Versioned: VersionedValue>(
        _ type: Versioned.Type,
        legacyVersion: Int? = nil
    ) -> ValueStore<Environment, Versioned> {
        let envelope = VersionEnvelope<Versioned>(legacyVersion: legacyVersion)
        let label = label
        @Sendable func decode(_ data: Data) throws -> Versioned {
            do {
                return try envelope.decode(data)
            } catch let error as ValueStoreError {
                throw error.naming(label)
            }
        }
        @Sendable func refuseNewer(_ data: Data?, doing operation: String) throws {
            guard let data else { return }
            do {
                try envelope.refuseNewer(data, doing: operation)
            } catch let error as ValueStoreError {
                throw error.naming(label)
            }
        }
        @Sendable func encode(_ value: Versioned) throws -> Data {
            do {
                return try envelope.encode(value)
            } catch let error as ValueStoreError {
                throw error.naming(label)
            }
        }
        return ValueStore<Environment, Versioned>(
            label: label,
            load: { environment in
                try decode(await self.load(environment))
            },
            save: { value, environment in
                let data = try encode(value)
                let stored = try await self.update(environment) { current in
                    try refuseNewer(current, doing: "overwrite")
                    current = data
                }
                guard let stored, stored != data else { return value }
                return try decode(stored)
            },
            remove: { environment in
                // An absent value needs no check and no lock (a file store would create its lock
                // file); a value that appears after this load is removed after the check below.
                do {
                    _ = try await self.load(environment)
                } catch ValueStoreError.notFound {
                    return
                }
                _ = try await self.update(environment) { current in
                    try refuseNewer(current, doing: "remove")
                    current = nil
                }
            },
            update: { environment, body in
                try await updateConverting(environment, load: decode, save: encode, body: body)
            },
            changeSignals: changeSignals
        ).holdingSecrets(holdsSecrets)
    }
}
