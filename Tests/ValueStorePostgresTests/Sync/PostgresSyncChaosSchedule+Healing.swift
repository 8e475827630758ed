#if PostgreSQL
import Foundation
import ValueStore
import ValueStorePostgres
import ValueStoreSync
import ValueStoreTestSupport

// MARK: Healing

extension PostgresSyncChaosSchedule {
    /// Stops every fault, makes every replica in every folder (every device, every account it
    /// ever had) with every store, and syncs them round after round until all agree with the
    /// server and nothing is pending; their dumps then, or `nil` if that takes more than 8
    /// rounds.
    func heal() async throws -> [SyncReplicaDump]? {
        try await clearFaults()
        let dropped = devices.map { "\($0.name) \($0.forwarder.droppedAnswers)" }.joined(separator: ", ")
        say("answers to commits the forwarders dropped: \(dropped)")
        var replicas: [(device: SyncDeviceProcess, account: String)] = []
        for device in devices {
            for account in accounts
            where FileManager.default.fileExists(
                atPath: device.folder.appending(path: account).path(percentEncoded: false))
            {
                _ = try await device.send("make-stores \(account)")
                replicas.append((device, account))
            }
        }
        say("healing: \(replicas.count) replicas")
        for round in 1...8 {
            for (device, account) in replicas {
                try await sync(device, account: account)
            }
            notQuiet = []
            var dumps: [SyncReplicaDump] = []
            var server: [String: [String: SyncRecord]] = [:]
            for account in accounts {
                server[account] = try await serverRecords(of: account)
            }
            for (device, account) in replicas {
                let dump = try await device.dump(account)
                notQuiet += dump.unsettled(against: server[account] ?? [:])
                dumps.append(dump)
            }
            if notQuiet.isEmpty {
                say("healed after \(round) rounds")
                return dumps
            }
        }
        return nil
    }

    /// Every record the server holds for `account`, removals included: a whole-state pull under
    /// a name no device has.
    func serverRecords(of account: String) async throws -> [String: SyncRecord] {
        let remote = table.remote(for: SyncAccount(id: account))
        var records: [String: SyncRecord] = [:]
        var cursor = ServerVersion.zero
        while true {
            let request = SyncPullRequest(
                account: account, replica: ReplicaID("chaos-checker"), epoch: nil, cursor: cursor, seen: .zero,
                limit: 500, isResync: true)
            let page = try await Self.persistently { try await remote.pull(request) }
            for record in page.records {
                records[record.key] = record
            }
            if page.isComplete || page.cursor <= cursor {
                return records
            }
            cursor = page.cursor
        }
    }

    /// Runs one of the test's own operations on the server (its client, straight to the
    /// server), again while it throws ``/ValueStore/ValueStoreError/Code/unavailable`` (no
    /// connection came, so nothing was sent), for a minute at most: after a restart, on a loaded
    /// machine, this client may take longer to connect than its timeouts allow, and what is under
    /// test is the devices' sync, not this client's connect time.
    static func persistently<Result>(_ operation: () async throws -> Result) async throws -> Result {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            do {
                return try await operation()
            } catch let error as ValueStoreError where error.code == .unavailable && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
            }
        }
    }
}
#endif
