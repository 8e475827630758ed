extension ValueStore where Environment: Sendable {
    /// This store, migrating the value from `old` the first time it finds none of its own.
    ///
    /// ```swift
    /// let settings = ValueStore<Void, Settings>
    ///     .jsonFile(directory.appending(path: "settings.json"))
    ///     .replacing(legacySettings)
    /// ```
    ///
    /// - `load` reads this store. Only when it reports ``ValueStoreError/notFound`` and `old` has
    ///   a value does it migrate: inside this store's ``update`` transaction, it checks that this
    ///   store is still empty, reads `old` again and stores that value. Then it removes the value
    ///   from `old`, so a stale old value never comes back.
    /// - `save` writes this store only.
    /// - `update` migrates the same way inside its own transaction before `body` runs.
    /// - `remove` removes from `old`, then from this store.
    ///
    /// A migration reads `old` inside this store's transaction, so one that raced with a save,
    /// an update or a remove writes nothing: it finds this store holding a value, or `old`
    /// empty, and the load returns what the store holds now; or a remove that started before it
    /// removes what it wrote. On file stores the transaction commits only if no writer, in any
    /// process, touched the file since it was read, so this holds across processes too. No
    /// operation holds one store's lock while writing the other, so two keys of one
    /// ``SettingsFile`` can replace each other.
    ///
    /// > Important: Any error other than absence, from either store, propagates: corrupt new
    /// > data is never papered over with old data.
    ///
    /// - Parameter old: The store the value used to live in.
    /// - Returns: A store that reads and writes this one, migrating from `old` once.
    public func replacing(_ old: Self) -> Self {
        /// Runs this store's update, first moving `old`'s value in if this store is empty, and
        /// removes the value from `old` once the migrated value is stored.
        let migratingUpdate: Update = { environment, body in
            var migrated = false
            let stored = try await self.update(environment) { value in
                migrated = false  // a backend may run the body again
                if value == nil {
                    do {
                        value = try await old.load(environment)
                        migrated = true
                    } catch ValueStoreError.notFound {
                        // Nothing to migrate: the update starts from absence.
                    }
                }
                try await body(&value)
            }
            if migrated {
                // After the new store holds the value: a crash before this line leaves the old
                // value behind, which this store's value hides and the next remove deletes.
                try await old.remove(environment)
            }
            return stored
        }
        return Self(
            label: label,
            load: { environment in
                do {
                    return try await self.load(environment)
                } catch ValueStoreError.notFound {
                    // Look before locking: with nothing to migrate, a load writes nothing.
                    do {
                        _ = try await old.load(environment)
                    } catch ValueStoreError.notFound {
                        // A concurrent load may have just moved the value; read it from here.
                        return try await self.load(environment)
                    }
                    guard let stored = try await migratingUpdate(environment, { _ in }) else {
                        throw ValueStoreError(.notFound, store: self.label)
                    }
                    return stored
                }
            },
            save: { value, environment in try await self.save(value, environment) },
            remove: { environment in
                // Old first: a crash in between leaves this store's value, never an old one to
                // migrate back. A migration racing with this reads `old` inside this store's
                // transaction, so it finds nothing, or its write is removed next.
                try await old.remove(environment)
                try await self.remove(environment)
            },
            update: migratingUpdate,
            changeSignals: changeSignals
        ).holdingSecrets(holdsSecrets)
    }
}
