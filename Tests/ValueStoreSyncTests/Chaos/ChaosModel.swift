import Foundation
import Synchronization
import ValueStoreSync

/// What a chaos schedule knows of its writes: each write's identity and causal history, the
/// stamps of removals (which carry no value to name them), the increments, and the versions
/// each device has shown, for the monotonic reads check.
final class ChaosModel: Sendable {
    struct Write: Sendable {
        let id: String
        let device: String
        let account: String
        let key: String
        /// The write whose value (or removal) the device showed when it made this one.
        let predecessor: String?
        /// Whether the replica had not finished its first pull: such an edit loses to the
        /// server's value by design (`SyncOptions.FirstSync.keepRemote`), whatever it had seen.
        let isFirstSyncEdit: Bool
    }

    private struct State {
        var nextWrite = 0
        var writes: [Write] = []
        /// Each write's history: itself and every write its device had seen of the key.
        var history: [String: Set<String>] = [:]
        /// Removals by identity.
        var removals: [HybridTimestamp: String] = [:]
        var increments: [String: Int] = [:]
        /// The highest server version each (device, account, key) showed.
        var versions: [String: ServerVersion] = [:]
        /// The identity every replica was given, by (device, account).
        var identities: [String: ReplicaID] = [:]
        /// Whether the server was restored or started a new epoch: versions start over then, on
        /// each device when it catches up, so monotonic reads are not checked from there on.
        var wentBack = false
    }

    private let state = Mutex(State())

    func nextWriteID() -> String {
        state.withLock { state in
            state.nextWrite += 1
            return "w\(state.nextWrite)"
        }
    }

    /// The write a record holds: named by its value, or a removal by its identity (its first
    /// stamp, which a conflict's stamp is too).
    func identity(of record: SyncRecord?) -> String? {
        guard let record else { return nil }
        return identity(value: record.value, stamp: record.identity)
    }

    func identity(value: Data?, stamp: HybridTimestamp) -> String? {
        if let value {
            let text = (try? JSONDecoder().decode(String.self, from: value)) ?? ""
            return text.split(separator: "@").first.map(String.init)
        }
        return state.withLock { $0.removals[stamp] }
    }

    func history(of id: String?) -> Set<String> {
        guard let id else { return [] }
        return state.withLock { $0.history[id] ?? [id] }
    }

    var writes: [Write] { state.withLock { $0.writes } }

    /// Whether the write was a removal.
    func isRemoval(_ id: String) -> Bool {
        state.withLock { $0.removals.values.contains(id) }
    }

    func increments(of account: String) -> Int {
        state.withLock { $0.increments[account] ?? 0 }
    }

    var identities: [String: ReplicaID] { state.withLock { $0.identities } }

    func noteWrite(
        id: String,
        device: String,
        account: String,
        key: String,
        record: SyncRecord,
        predecessor: SyncRecord?,
        isFirstSyncEdit: Bool
    ) {
        let previous = identity(of: predecessor)
        let previousHistory = history(of: previous)
        state.withLock { state in
            state.writes.append(
                Write(
                    id: id, device: device, account: account, key: key, predecessor: previous,
                    isFirstSyncEdit: isFirstSyncEdit))
            state.history[id] = previousHistory.union([id])
            if record.value == nil {
                state.removals[record.identity] = id
            }
        }
    }

    func noteIncrement(account: String) {
        state.withLock { $0.increments[account, default: 0] += 1 }
    }

    func noteOpened(device: String, account: String, id: ReplicaID) {
        state.withLock { $0.identities["\(device)/\(account)"] = id }
    }

    /// After a restore or a new epoch, versions start over.
    func noteServerWentBack() {
        state.withLock { $0.wentBack = true }
    }

    /// Monotonic reads: no open replica shows a key at a lower server version than it showed
    /// before (until the server goes back).
    func checkMonotonicReads(devices: [ChaosSchedule.Device], accounts: [SyncAccount]) -> [String] {
        var problems: [String] = []
        guard !state.withLock({ $0.wentBack }) else { return [] }
        for device in devices {
            guard let replica = device.replica else { continue }
            let account = accounts[device.account].id
            for key in ChaosSchedule.keys.map(\.name) + [ChaosSchedule.counter] {
                guard let version = replica.syncedVersion(of: key) else { continue }
                let slot = "\(device.name)/\(account)/\(key)"
                state.withLock { state in
                    if let before = state.versions[slot], version < before {
                        problems.append("monotonic reads: \(slot) went from version \(before) back to \(version)")
                    }
                    state.versions[slot] = max(version, state.versions[slot] ?? version)
                }
            }
        }
        return problems
    }
}
