package import Foundation
import Synchronization
public import ValueStore

extension SyncReplica {
    /// The store of one synced key, holding any `Codable` value as JSON.
    ///
    /// ```swift
    /// let theme = replica.store("theme", as: Theme.self)       // last writer wins
    /// let draft = replica.store("draft", as: String.self, policy: .saveBeatsRemove)
    /// let quota = replica.store("quota", as: Int.self, policy: .compareAndSet)
    /// let tags = replica.store("tags", as: Set<String>.self,
    ///                          policy: .merge { base, local, remote in (local ?? []).union(remote ?? []) })
    /// ```
    ///
    /// A load reads the key's record from memory: the latest local change, or the latest record
    /// pulled; first, when another process sharing the folder committed since, what it committed. A save, remove or update is one durable commit of the key's record, marked pending,
    /// and returns: it never waits for the network. `update` is atomic on this device; across
    /// devices it is atomic only under `.compareAndSet` (a concurrent update is archived and the
    /// value becomes the server's) and `.merge`. A save or update that leaves the value's bytes
    /// as they were writes nothing, and removing an absent key does nothing. `changes()` yields
    /// after local changes and after pulls that change the value.
    ///
    /// Making a `.merge` store gives the replica the key's merge: until then, a pending change of
    /// the key that meets another device's change stays pending, never overwritten unmerged.
    ///
    /// - Parameters:
    ///   - key: The key, the same on every device. Two spellings of one text (canonically
    ///     equivalent Unicode, such as a precomposed "é" and "e" with a combining accent) are one
    ///     key, kept and sent in its canonical composition (NFC), as every server keeps it.
    ///   - type: The value's type.
    ///   - policy: How concurrent changes of the key are settled; last writer wins by default.
    /// - Returns: A store of the key.
    public func store<Value: Codable & Sendable>(
        _ key: String,
        as type: Value.Type = Value.self,
        policy: SyncPolicy<Value> = .lastWriterWins
    ) -> ValueStore<Void, Value> {
        let label = "key '\(key)' in \(label)"
        // One key, however it is spelled: its canonical composition, as on every server.
        let key = SyncKey.normalized(key)
        if let merge = policy.merge, policy.kind == .merge {
            let encoded: EncodedMerge = { base, local, remote in
                let merged = merge(
                    try base.map { try Self.decode($0, as: Value.self, label: label) },
                    try local.map { try Self.decode($0, as: Value.self, label: label) },
                    try remote.map { try Self.decode($0, as: Value.self, label: label) })
                return try merged.map { try Self.encode($0, label: label) }
            }
            withState { state in
                state.merges[key] = encoded
                // Pending changes of the key may have waited for this merge.
                if state.records[key]?.isPending == true {
                    state.ring(push: true)
                }
            }
        }
        let kind = policy.kind
        return ValueStore(
            label: label,
            load: { _ in
                try await self.open()
                try await self.catchUpIfNeeded()
                guard let data = self.withState({ $0.records[key]?.value }) else {
                    throw ValueStoreError(.notFound, store: label)
                }
                return try Self.decode(data, as: Value.self, label: label)
            },
            save: { value, _ in
                let data = try Self.encode(value, label: label)
                try await self.change(key, policy: kind) { $0 = data }
                return value
            },
            remove: { _ in
                try await self.change(key, policy: kind) { $0 = nil }
            },
            update: { _, body in
                var result: Value?
                try await self.change(key, policy: kind) { data in
                    var value = try data.map { try Self.decode($0, as: Value.self, label: label) }
                    try await body(&value)
                    result = value
                    data = try value.map { try Self.encode($0, label: label) }
                }
                return result
            },
            changeSignals: { _ in self.keyChanges(key).signals() }
        )
    }

    /// A local change of `key`: `body` turns the current value's bytes (`nil`: absent) into the
    /// new ones, and, if they differ, the new record is committed durably, pending, and `run()`
    /// is told to push.
    func change(
        _ key: String,
        policy: SyncRecord.Policy,
        _ body: (_ value: inout Data?) async throws -> Void
    ) async throws {
        try await exclusively {
            let previous = withState { $0.records[key] }
            var value = previous?.value
            try await body(&value)
            guard value != previous?.value else { return }
            let now = options.clock.milliseconds
            // After the key's records too, though the clock went back below one stamped in the
            // server's future: a change is later than the record it was made on.
            let stamp = withState { state in
                state.clock.stamp(now: now, replica: state.meta!.id, after: previous?.serverStamps ?? [])
            }
            let record = LocalRecord.change(on: previous, key: key, value: value, stamp: stamp, policy: policy)
            try await commitLocal(ReplicaFiles.Changes(records: [key: record]))
        }
    }

    /// Local changes of many keys in one commit, for tests and setups that need many pending
    /// changes fast: each as ``change(_:policy:_:)`` would make it.
    package func change(_ values: [String: Data?], policy: SyncRecord.Policy) async throws {
        try await exclusively {
            let now = options.clock.milliseconds
            let changed = withState { state in
                var changed: [String: LocalRecord?] = [:]
                for (key, value) in values.map({ (SyncKey.normalized($0.key), $0.value) })
                where state.records[key]?.value != value {
                    let stamp = state.clock.stamp(
                        now: now, replica: state.meta!.id, after: state.records[key]?.serverStamps ?? [])
                    changed[key] = LocalRecord.change(
                        on: state.records[key], key: key, value: value, stamp: stamp, policy: policy)
                }
                return changed
            }
            try await commitLocal(ReplicaFiles.Changes(records: changed))
        }
    }

    /// Commits local changes: one more local write, the one each of their keys last had, and
    /// `run()` told to push.
    private func commitLocal(_ changes: ReplicaFiles.Changes) async throws {
        withState { state in
            state.writes += 1
            for key in changes.records.keys {
                state.lastWrite[key] = state.writes
            }
        }
        try await commit(changes) { $0.ring(push: true) }
    }

    static func decode<Value: Decodable>(_ data: Data, as type: Value.Type, label: String) throws -> Value {
        do {
            return try JSONDecoder().decode(Value.self, from: data)
        } catch {
            throw ValueStoreError(
                .decodingFailed, store: label, reason: "the synced value does not decode as \(Value.self)",
                underlyingError: error)
        }
    }

    static func encode<Value: Encodable>(_ value: Value, label: String) throws -> Data {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            return try encoder.encode(value)
        } catch {
            throw ValueStoreError(
                .encodingFailed, store: label, reason: "the value does not encode as JSON", underlyingError: error)
        }
    }
}
