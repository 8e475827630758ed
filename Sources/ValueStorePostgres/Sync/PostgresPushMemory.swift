#if PostgreSQL
import Foundation
import Synchronization
import ValueStoreSync

/// What a table value's last push of each account read and wrote, so that its next push can
/// skip the read: one round trip instead of two while one process pushes in a row.
///
/// A push writes only over the account row's version (`xmin`) it answered against, and every
/// write to an account's records, idempotency entries or epoch rewrites that row. So the state
/// remembered with the version a push's own write left is exactly the server's while the row is
/// still that version; when it is not, the write applies nothing and the push reads as before.
/// Only what was read is remembered (the keys, the authors' entries, the pusher's progress), and
/// a push that names anything else reads. Pulls, which record progress without rewriting the
/// row, tell the memory the progress they recorded; a pull that another process served is not
/// heard of, so remembered progress can be behind, never ahead: a refusal (which only progress
/// behind could cause wrongly) is never answered from memory. The server's clock is estimated
/// from the last read, whose memory is trusted for ``lifetime`` at most.
final class PostgresPushMemory: Sendable {
    /// How long a read is trusted, its clock included.
    static let lifetime = Duration.seconds(1)

    struct Recalled {
        var state: SyncAccountState
        var now: Int64
        var version: String
    }

    private struct Entry {
        var state: SyncAccountState
        var version: String
        var keys: Set<String>
        var entries: Set<SyncReplicaKey>
        var replicas: Set<ReplicaID>
        /// The server's clock at the last read, and when that was here.
        var serverTime: Int64
        var readAt: ContinuousClock.Instant
    }

    /// By account, told apart by their ids' bytes (``/ValueStoreSync/SyncAccount``'s equality),
    /// as the database tells their rows apart: ids only Unicode calls equal are two accounts,
    /// and one's state must never answer, or raise the progress of, the other's push.
    private let entries = Mutex<[SyncAccount: Entry]>([:])

    /// The state a push of `request` can answer against without reading, if this memory covers
    /// all of it.
    func recall(_ request: SyncPushRequest) -> Recalled? {
        entries.withLock { entries in
            guard let entry = entries[SyncAccount(id: request.account)] else { return nil }
            let age = ContinuousClock.now - entry.readAt
            guard age < Self.lifetime, entry.replicas.contains(request.replica),
                request.changes.allSatisfy({ entry.keys.contains($0.key) }),
                request.changes.allSatisfy({
                    entry.entries.contains(SyncReplicaKey(replica: $0.stamp.replica, key: $0.key))
                })
            else { return nil }
            let elapsed = age.components.seconds * 1_000 + age.components.attoseconds / 1_000_000_000_000_000
            return Recalled(state: entry.state, now: entry.serverTime + elapsed, version: entry.version)
        }
    }

    /// Remembers the state an accepted push of `request` left at `version`: `read` (the
    /// server's clock, and when it was read here) when it read, `nil` when it answered from this
    /// memory. Progress never goes below what the memory held.
    func remember(
        _ state: SyncAccountState,
        at version: String,
        after request: SyncPushRequest,
        read: (serverTime: Int64, at: ContinuousClock.Instant)?
    ) {
        var state = state
        state.archive = []
        let account = SyncAccount(id: request.account)
        entries.withLock { entries in
            let previous = entries[account]
            guard let (serverTime, readAt) = read ?? previous.map({ ($0.serverTime, $0.readAt) }) else { return }
            if let previous {
                for (replica, known) in previous.state.progress {
                    state.progress[replica, default: known].raise(to: known)
                }
            }
            let keep = read == nil ? previous : nil
            if entries.count > 256 {
                // Accounts this process stopped pushing: their reads are no longer trusted.
                entries = entries.filter { ContinuousClock.now - $0.value.readAt < Self.lifetime }
            }
            entries[account] = Entry(
                state: state, version: version,
                keys: Set(request.changes.map(\.key)).union(keep?.keys ?? []),
                entries: Set(request.changes.map { SyncReplicaKey(replica: $0.stamp.replica, key: $0.key) })
                    .union(keep?.entries ?? []),
                replicas: Set([request.replica]).union(keep?.replicas ?? []),
                serverTime: serverTime, readAt: readAt)
        }
    }

    /// Forgets the account: its next push reads.
    func forget(_ account: String) {
        _ = entries.withLock { $0.removeValue(forKey: SyncAccount(id: account)) }
    }

    /// Notes the progress a pull recorded for `replica`, which leaves the row's version alone.
    func note(_ progress: SyncReplicaProgress, of replica: ReplicaID, in account: String) {
        let account = SyncAccount(id: account)
        entries.withLock { entries in
            guard entries[account]?.replicas.contains(replica) == true else { return }
            entries[account]?.state.progress[replica, default: progress].raise(to: progress)
        }
    }
}
#endif
