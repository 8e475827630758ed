import Foundation
import ValueStore
import ValueStoreSync

/// The invariants a healed chaos schedule must keep, each one a list of what broke it.
struct ChaosChecker {
    let schedule: ChaosSchedule
    let replicas: [ChaosSchedule.Healed]

    func problems() async throws -> [String] {
        var problems: [String] = []
        let model = schedule.model
        for account in schedule.accounts {
            let found = problems.count
            let state = schedule.server.state(of: account)
            let records = state?.records.mapValues(\.record) ?? [:]
            let replicas = replicas.filter { $0.account == account.id }
            var archived = try await schedule.server.archivedConflicts(for: account)
            for replica in replicas {
                archived += try await replica.replica.archivedConflicts()
                archived += replica.replica.status.rejectedChanges
                if !replica.replica.status.rejectedChanges.isEmpty {
                    problems.append("\(replica.device)/\(account.id) has rejected changes")
                }
                // Convergence, as healing saw it, and nothing pending.
                if replica.replica.records.compactMapValues(\.value) != records.compactMapValues(\.value) {
                    problems.append("convergence: \(replica.device)/\(account.id) differs from the server")
                }
                if replica.replica.status.pendingChanges != 0 {
                    problems.append("convergence: \(replica.device)/\(account.id) has pending changes")
                }
            }

            // No lost write: each is in the history of the converged record or of an archived one.
            var covered: Set<String> = []
            for key in ChaosSchedule.keys.map(\.name) {
                covered.formUnion(model.history(of: model.identity(of: records[key])))
            }
            for conflict in archived where conflict.key != ChaosSchedule.counter {
                covered.formUnion(model.history(of: model.identity(value: conflict.value, stamp: conflict.stamp)))
            }
            let writes = model.writes.filter { $0.account == account.id }
            // A removal that lost to another removal is not archived: nothing it said is lost,
            // since the key is removed all the same.
            for write in writes where records[write.key]?.value == nil && model.isRemoval(write.id) {
                covered.formUnion(model.history(of: write.id))
            }
            for write in writes where !covered.contains(write.id) {
                problems.append(
                    "lost write: \(write.id) (\(write.key) on \(write.device)) is neither the converged value nor archived"
                )
            }

            // Causality: a write made after seeing another never loses to it (an edit made before
            // the first pull loses to the server's value by design).
            if !schedule.renewed.contains(account.id) {
                for write in writes where !write.isFirstSyncEdit {
                    guard let seen = write.predecessor, model.identity(of: records[write.key]) == seen else { continue }
                    problems.append("causality: \(write.id) was made after seeing \(seen), yet \(seen) won")
                }
            }

            if problems.count > found {
                let final = ChaosSchedule.keys.map { "\($0.name)=\(model.identity(of: records[$0.name]) ?? "none")" }
                let lost = archived.map { "\($0.key):\(model.identity(value: $0.value, stamp: $0.stamp) ?? "?")" }
                problems.append("\(account.id): converged \(final), archived \(lost)")
            }

            // Exactly once: the counter totals the increments made.
            let counts = try records[ChaosSchedule.counter]?.value.map {
                try JSONDecoder().decode([String: Int].self, from: $0)
            }
            let total = counts?.values.reduce(0, +) ?? 0
            let made = model.increments(of: account.id)
            if schedule.renewed.contains(account.id) ? total > made : total != made {
                problems.append("exactly once: \(account.id)'s counter totals \(total), after \(made) increments")
            }

            // No default written, and account isolation, on the server, in archives and locally.
            var values = records.values.compactMap(\.value) + archived.compactMap(\.value)
            for replica in replicas {
                values += replica.replica.records.values.compactMap(\.value)
            }
            for value in values {
                guard let text = try? JSONDecoder().decode(String.self, from: value) else { continue }
                if text == ChaosSchedule.defaultValue {
                    problems.append("a default was written to \(account.id)")
                } else if !text.hasSuffix("@\(account.id)") {
                    problems.append("isolation: \(text) is in account \(account.id)")
                }
            }
        }

        // Copies: no two replicas, in two folders, share an identity.
        var owners: [ReplicaID: String] = [:]
        for replica in replicas {
            let id = try await replica.replica.id
            if let other = owners[id], !other.hasPrefix(replica.device + "/") {
                problems.append("identity \(id) is shared by \(other) and \(replica.device)/\(replica.account)")
            }
            owners[id] = "\(replica.device)/\(replica.account)"
        }
        return problems
    }
}
