import Benchmark
import Foundation
import ValueStore
import ValueStoreSync

// Pushes and pulls of 10,000 and 100,000 keys through the in-memory server: the 100,000-key row
// must cost at most twelve times the 10,000-key one (targets.txt), so that the work grows with
// the keys, not with their square.
//
// A local save is a durable commit of its own, a flush of a few milliseconds on this machine, so
// the pending changes are not made by saves: the replica pulls the keys from one server (not
// measured), then meets an empty server that has the same epoch, as after a restore from a
// backup taken before the account had data; the sync measured pushes every record back to it.
// The pull row pulls the keys another replica pushed since this one's last sync.

extension Benchmark.Configuration {
    /// A few samples of several seconds each, with one warm-up.
    static func syncScale(iterations: Int, seconds: Int) -> Self {
        Self(metrics: [.wallClock], warmupIterations: 1, maxDuration: .seconds(seconds), maxIterations: iterations)
    }
}

func registerSyncScaleRows() {
    let rows: [(count: Int, name: String, configuration: Benchmark.Configuration)] = [
        (10_000, "10,000", .syncScale(iterations: 10, seconds: 60)),
        (100_000, "100,000", .syncScale(iterations: 3, seconds: 300)),
    ]
    for (count, name, configuration) in rows {
        benchmarkInFreshDirectory("SyncReplica: \(name) keys pulled", configuration: configuration) { directory in
            directory
        } measure: { benchmark, directory in
            let account = SyncAccount(id: "benchmark")
            let server = InMemorySyncServer()
            let replica = try SyncReplica(
                directory: directory.appending(path: UUID().uuidString, directoryHint: .isDirectory),
                account: account, remote: server.remote(for: account), options: scaleOptions())
            try await replica.syncNow()
            try await pushKeys(count, to: server, account: account)
            benchmark.startMeasurement()
            try await replica.syncNow()
            benchmark.stopMeasurement()
            try expect(
                try await replica.store("key\(count - 1)", as: Int.self).load() == count - 1, "every key is pulled")
        }

        benchmarkInFreshDirectory("SyncReplica: \(name) keys pushed", configuration: configuration) { directory in
            directory
        } measure: { benchmark, directory in
            let account = SyncAccount(id: "benchmark")
            let folder = directory.appending(path: UUID().uuidString, directoryHint: .isDirectory)
            do {
                let first = InMemorySyncServer()
                try await pushKeys(count, to: first, account: account)
                let replica = try SyncReplica(
                    directory: folder, account: account, remote: first.remote(for: account), options: scaleOptions())
                try await replica.syncNow()
            }
            let server = InMemorySyncServer()
            let replica = try SyncReplica(
                directory: folder, account: account, remote: server.remote(for: account), options: scaleOptions())
            benchmark.startMeasurement()
            try await replica.syncNow()
            benchmark.stopMeasurement()
            try expect(replica.status.pendingChanges == 0, "every key is pushed")
            let head = try await server.remote(for: account).pull(
                SyncPullRequest(
                    account: account.id, replica: ReplicaID("checker"), epoch: nil, cursor: .zero, seen: .zero,
                    limit: 1, isResync: true)
            ).head
            try expect(head == ServerVersion(Int64(count)), "the server holds every key")
        }
    }
}

/// The replica's options: no `fsync` of the settings file (the journal's entries still flush).
private func scaleOptions() -> SyncOptions {
    var options = SyncOptions()
    options.fileOptions = .cache
    return options
}

/// Pushes `count` keys, `key0` … (each its index, as JSON), to `server` as another replica did.
private func pushKeys(_ count: Int, to server: InMemorySyncServer, account: SyncAccount) async throws {
    let remote = server.remote(for: account)
    let writer = ReplicaID("writer")
    let epoch = try await remote.pull(
        SyncPullRequest(
            account: account.id, replica: writer, epoch: nil, cursor: .zero, seen: .zero, limit: 1, isResync: true)
    ).epoch
    let now = Int64(Date().timeIntervalSince1970 * 1_000)
    for start in stride(from: 0, to: count, by: 1_000) {
        let changes = (start..<min(count, start + 1_000)).map { index in
            SyncRecord(
                key: "key\(index)", value: Data("\(index)".utf8),
                stamp: HybridTimestamp(milliseconds: now, counter: UInt32(index), replica: writer), base: nil,
                policy: .lastWriterWins)
        }
        let response = try await remote.push(
            SyncPushRequest(
                account: account.id, replica: writer, epoch: epoch, seen: .zero, cursor: .zero, changes: changes))
        try expect(response.refusal == nil, "the server takes the keys")
    }
}
