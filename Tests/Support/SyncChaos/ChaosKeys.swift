package import ValueStore
package import ValueStoreSync

/// The keys every chaos schedule edits, in memory and in the device processes of the PostgreSQL
/// one: one per value policy, and a `.merge` counter that counts each device's increments under
/// the device's name and merges by pointwise maximum.
///
/// Every value written is unique (`w17@alice`: the write's name and its account), so the checker
/// can tell where each write went.
package enum ChaosKeys {
    /// The keys of string values, by policy.
    package static let values: [(name: String, policy: SyncRecord.Policy)] = [
        ("lww", .lastWriterWins), ("sbr", .saveBeatsRemove), ("cas", .compareAndSet),
    ]
    /// The names of ``values``.
    package static var valueNames: [String] { values.map(\.name) }
    /// The counter's key.
    package static let counter = "counter"
    /// The counter's merge: each device's count, pointwise maximum.
    package static let counterPolicy = SyncPolicy<[String: Int]>.merge { _, local, remote in
        (local ?? [:]).merging(remote ?? [:], uniquingKeysWith: max)
    }
    /// The default a store shows for absence, which must never reach a file or the server.
    package static let defaultValue = "DEFAULT"

    /// The store of one of ``values`` in `replica`.
    package static func store(_ key: String, in replica: SyncReplica) -> ValueStore<Void, String> {
        let policy = values.first { $0.name == key }?.policy ?? .lastWriterWins
        return replica.store(key, as: String.self, policy: SyncPolicy(kind: policy, merge: nil))
    }

    /// The counter's store in `replica`; making it gives the replica the counter's merge.
    package static func counter(in replica: SyncReplica) -> ValueStore<Void, [String: Int]> {
        replica.store(counter, as: [String: Int].self, policy: counterPolicy)
    }

    /// Adds one to `device`'s own count in the counter of `replica`.
    package static func increment(_ device: String, in replica: SyncReplica) async throws {
        try await counter(in: replica).optional().update { counts in
            var value = counts ?? [:]
            value[device, default: 0] += 1
            counts = value
        }
    }
}

/// What a device showed of a key around one local write: the record it was made on, the record
/// it made, and whether the replica had not finished its first pull.
package struct ChaosObservedWrite: Codable, Sendable {
    package var before: SyncRecord?
    package var after: SyncRecord?
    package var isFirstSyncEdit: Bool
}

extension SyncReplica {
    /// Runs `write`, a local change of `key`, and returns the key's record just before and just
    /// after it, read while holding the replica's write lock, so no pull comes in between even
    /// while `run()` syncs.
    ///
    /// The lock is held through an `update` of a key that is never written (its body leaves it
    /// absent); `write` runs inside that body, as a write from an update's body may.
    package func observing(_ key: String, _ write: () async throws -> Void) async throws -> ChaosObservedWrite {
        var observed = ChaosObservedWrite(before: nil, after: nil, isFirstSyncEdit: false)
        try await store("chaos.probe", as: String.self).optional().update { _ in
            observed.before = self.record(for: key)
            observed.isFirstSyncEdit = !self.hasPulled
            try await write()
            observed.after = self.record(for: key)
        }
        return observed
    }
}
