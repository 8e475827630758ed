package import Foundation
import Synchronization
package import ValueStoreSync

/// What a chaos schedule knows of its writes: each write's identity and causal history, the
/// stamps of removals (which carry no value to name them), the increments, and the versions
/// each device has shown, for the monotonic reads check.
package final class ChaosModel: Sendable {
    package struct Write: Sendable {
        package let id: String
        package let device: String
        package let account: String
        package let key: String
        /// The write whose value (or removal) the device showed when it made this one.
        package let predecessor: String?
        /// Whether the replica had not finished its first pull: such an edit loses to the
        /// server's value by design (`SyncOptions.FirstSync.keepRemote`), whatever it had seen.
        package let isFirstSyncEdit: Bool
    }

    private struct State {
        var nextWrite = 0
        package var writes: [Write] = []
        /// Each write's history: itself and every write its device had seen of the key.
        var history: [String: Set<String>] = [:]
        /// Removals by identity.
        var removals: [HybridTimestamp: String] = [:]
        var increments: [String: Int] = [:]
        /// The highest server version each (device, account, key) showed.
        var versions: [String: ServerVersion] = [:]
        /// The identity every replica was given, by (device, account).
        package var identities: [String: ReplicaID] = [:]
        /// Whether the server was restored or started a new epoch: versions start over then, on
        /// each device when it catches up, so monotonic reads are not checked from there on.
        var wentBack = false
    }

    private let state = Mutex(State())

    package init() {}

    package func nextWriteID() -> String {
        state.withLock { state in
            state.nextWrite += 1
            return "w\(state.nextWrite)"
        }
    }

    /// The write a record holds: named by its value, or a removal by its identity (its first
    /// stamp, which a conflict's stamp is too).
    package func identity(of record: SyncRecord?) -> String? {
        guard let record else { return nil }
        return identity(value: record.value, stamp: record.identity)
    }

    package func identity(value: Data?, stamp: HybridTimestamp) -> String? {
        if let value {
            let text = (try? JSONDecoder().decode(String.self, from: value)) ?? ""
            return text.split(separator: "@").first.map(String.init)
        }
        return state.withLock { $0.removals[stamp] }
    }

    package func history(of id: String?) -> Set<String> {
        guard let id else { return [] }
        return state.withLock { $0.history[id] ?? [id] }
    }

    package var writes: [Write] { state.withLock { $0.writes } }

    /// Whether the write was a removal.
    package func isRemoval(_ id: String) -> Bool {
        state.withLock { $0.removals.values.contains(id) }
    }

    /// A write in a few words, for failure messages: what it was made on, and a removal's stamp.
    package func describe(_ write: Write) -> String {
        let stamp = state.withLock { $0.removals.first { $0.value == write.id }?.key }
        return "\(write.id) (\(stamp.map { "removal of \(write.key) stamped \($0)" } ?? "save of \(write.key)")"
            + " on \(write.device), made on \(write.predecessor ?? "nothing"))"
    }

    /// Whether `write`, a removal, is settled by a later removal of its key among `settled`: two
    /// concurrent removals go by stamp, and the earlier one is not archived, since nothing it
    /// said is lost; a save may then be made on the later one.
    package func isRemovalSettled(_ write: Write, byOneOf settled: Set<String>) -> Bool {
        state.withLock { state in
            guard let stamp = state.removals.first(where: { $0.value == write.id })?.key else { return false }
            return state.removals.contains { other, id in
                other > stamp && settled.contains(id) && state.writes.contains { $0.id == id && $0.key == write.key }
            }
        }
    }

    package func increments(of account: String) -> Int {
        state.withLock { $0.increments[account] ?? 0 }
    }

    package var identities: [String: ReplicaID] { state.withLock { $0.identities } }

    /// Notes a write a device made, as it observed it (see ``SyncReplica/observing(_:_:)``); a
    /// write that left the key as it was is no write.
    package func noteWrite(id: String, device: String, account: String, key: String, observed: ChaosObservedWrite) {
        guard let record = observed.after, observed.after != observed.before else { return }
        let previous = identity(of: observed.before)
        let previousHistory = history(of: previous)
        state.withLock { state in
            state.writes.append(
                Write(
                    id: id, device: device, account: account, key: key, predecessor: previous,
                    isFirstSyncEdit: observed.isFirstSyncEdit))
            state.history[id] = previousHistory.union([id])
            if record.value == nil {
                state.removals[record.identity] = id
            }
        }
    }

    package func noteIncrement(account: String) {
        state.withLock { $0.increments[account, default: 0] += 1 }
    }

    package func noteOpened(device: String, account: String, id: ReplicaID) {
        state.withLock { $0.identities["\(device)/\(account)"] = id }
    }

    /// After a restore or a new epoch, versions start over.
    package func noteServerWentBack() {
        state.withLock { $0.wentBack = true }
    }

    /// Monotonic reads: a replica never shows a key at a lower server version than it showed
    /// before (until the server goes back). `versions` are what the replica of `account` on
    /// `device` shows now, by key (``SyncReplica/syncedVersions``).
    package func checkMonotonicReads(device: String, account: String, versions: [String: ServerVersion]) -> [String] {
        state.withLock { state in
            guard !state.wentBack else { return [] }
            var problems: [String] = []
            for (key, version) in versions.sorted(by: { $0.key < $1.key }) {
                let slot = "\(device)/\(account)/\(key)"
                if let before = state.versions[slot], version < before {
                    problems.append("monotonic reads: \(slot) went from version \(before) back to \(version)")
                }
                state.versions[slot] = max(version, state.versions[slot] ?? version)
            }
            return problems
        }
    }
}
