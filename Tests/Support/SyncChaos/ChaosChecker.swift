import Foundation
package import ValueStoreSync

/// The invariants a healed chaos schedule must keep, each one a list of what broke it: the same
/// checks for the in-memory schedule and for device processes syncing through PostgreSQL.
///
/// It looks only at data: the model of every write the schedule made, the server's records and
/// archive of each account, and a dump of every replica in every folder.
package struct ChaosChecker {
    /// What the server holds for one account.
    package struct Server: Sendable {
        /// Every key's record, removals included.
        package var records: [String: SyncRecord]
        /// The changes that lost, until resolved.
        package var archive: [SyncConflict]

        package init(records: [String: SyncRecord], archive: [SyncConflict]) {
            self.records = records
            self.archive = archive
        }
    }

    package let model: ChaosModel
    /// The server's state, by account id.
    package let server: [String: Server]
    /// Every replica, healed.
    package let replicas: [SyncReplicaDump]
    /// The accounts that started a new epoch: their counters may have lost increments to the
    /// archive, and a write may lose to a record it had seen.
    package let renewed: Set<String>

    package init(model: ChaosModel, server: [String: Server], replicas: [SyncReplicaDump], renewed: Set<String>) {
        self.model = model
        self.server = server
        self.replicas = replicas
        self.renewed = renewed
    }

    package func problems() -> [String] {
        var problems: [String] = []
        for (account, server) in server.sorted(by: { $0.key < $1.key }) {
            let found = problems.count
            let records = server.records
            let replicas = replicas.filter { $0.account == account }
            var archived = server.archive
            for replica in replicas {
                archived += replica.archive + replica.rejected
                if !replica.rejected.isEmpty {
                    let reasons = replica.rejected.map { "\($0.key): \($0.reason ?? "no reason")" }
                    problems.append("\(replica.name) has rejected changes (\(reasons.joined(separator: "; ")))")
                }
                // Convergence, as healing saw it, and nothing pending.
                if replica.records.compactMapValues(\.value) != records.compactMapValues(\.value) {
                    problems.append("convergence: \(replica.name) differs from the server")
                }
                if replica.pendingChanges != 0 {
                    problems.append("convergence: \(replica.name) has pending changes")
                }
            }

            // No lost write: each is in the history of the converged record or of an archived one.
            let writes = model.writes.filter { $0.account == account }
            let covered = Self.covered(by: records, archived, writes: writes, model: model)
            for write in writes where !covered.contains(write.id) {
                problems.append(
                    "lost write: \(model.describe(write)) is neither the converged value nor archived"
                )
            }

            // Causality: a write made after seeing another never loses to it (an edit made before
            // the first pull loses to the server's value by design).
            if !renewed.contains(account) {
                for write in writes where !write.isFirstSyncEdit {
                    guard let seen = write.predecessor, model.identity(of: records[write.key]) == seen else { continue }
                    problems.append("causality: \(write.id) was made after seeing \(seen), yet \(seen) won")
                }
            }

            if problems.count > found {
                let final = ChaosKeys.valueNames.map { "\($0)=\(model.identity(of: records[$0]) ?? "none")" }
                let lost = archived.map { "\($0.key):\(model.identity(value: $0.value, stamp: $0.stamp) ?? "?")" }
                problems.append("\(account): converged \(final), archived \(lost)")
            }

            // Exactly once: the counter totals the increments made.
            var total = 0
            if let counts = records[ChaosKeys.counter]?.value {
                do {
                    total = try JSONDecoder().decode([String: Int].self, from: counts).values.reduce(0, +)
                } catch {
                    problems.append("\(account)'s counter does not decode: \(error)")
                }
            }
            let made = model.increments(of: account)
            if renewed.contains(account) ? total > made : total != made {
                problems.append("exactly once: \(account)'s counter totals \(total), after \(made) increments")
            }

            // No default written, and account isolation, on the server, in archives and locally.
            var values = records.values.compactMap(\.value) + archived.compactMap(\.value)
            for replica in replicas {
                values += replica.records.values.compactMap(\.value)
            }
            for value in values {
                guard let text = try? JSONDecoder().decode(String.self, from: value) else { continue }
                if text == ChaosKeys.defaultValue {
                    problems.append("a default was written to \(account)")
                } else if !text.hasSuffix("@\(account)") {
                    problems.append("isolation: \(text) is in account \(account)")
                }
            }
        }

        // Copies: no two replicas, in two folders, share an identity.
        var owners: [ReplicaID: SyncReplicaDump] = [:]
        for replica in replicas {
            if let other = owners[replica.id], other.device != replica.device {
                problems.append("identity \(replica.id) is shared by \(other.name) and \(replica.name)")
            }
            owners[replica.id] = replica
        }
        return problems
    }

    /// The `writes` that `records` (by key) and `conflicts` account for: each in the history of
    /// a record or of an archived change, and each removal settled by the removal of its key, or
    /// by a later removal that is accounted for (neither is archived, since nothing it said is
    /// lost), with the writes it had seen.
    static func covered(
        by records: [String: SyncRecord],
        _ conflicts: [SyncConflict],
        writes: [ChaosModel.Write],
        model: ChaosModel
    ) -> Set<String> {
        var covered: Set<String> = []
        for key in ChaosKeys.valueNames {
            covered.formUnion(model.history(of: model.identity(of: records[key])))
        }
        for conflict in conflicts where conflict.key != ChaosKeys.counter {
            covered.formUnion(model.history(of: model.identity(value: conflict.value, stamp: conflict.stamp)))
        }
        for write in writes where records[write.key]?.value == nil && model.isRemoval(write.id) {
            covered.formUnion(model.history(of: write.id))
        }
        var grew = true
        while grew {
            grew = false
            for write in writes where !covered.contains(write.id) && model.isRemovalSettled(write, byOneOf: covered) {
                covered.formUnion(model.history(of: write.id))
                grew = true
            }
        }
        return covered
    }

    /// Local durability, after a device's process was killed and started again from its folder:
    /// each write `device` made to `account` (its latest of each key) is still in the replica,
    /// pending or acknowledged, or in the history of the record that replaced it, or archived
    /// or rejected there.
    package static func durabilityProblems(of replica: SyncReplicaDump, model: ChaosModel) -> [String] {
        let writes = model.writes.filter { $0.account == replica.account }
        let covered = covered(by: replica.records, replica.archive + replica.rejected, writes: writes, model: model)
        var latest: [String: ChaosModel.Write] = [:]
        for write in writes where write.device == replica.device {
            latest[write.key] = write
        }
        return latest.values.sorted { $0.key < $1.key }.compactMap { write in
            guard !covered.contains(write.id) else { return nil }
            return
                "durability: \(model.describe(write)), which \(replica.device) acknowledged, is not in \(replica.name)"
                + " after its restart: \(replica.records[write.key].map(SyncReplicaDump.describe) ?? "no record")"
        }
    }
}
