import Benchmark
import Foundation
import Synchronization
import ValueStore
import ValueStoreSync

// A synced key's local save is one durable commit of the key's record, outbox mark included:
// judged against a SettingsFile key's save in the same run, the floor of that work (target 1.3).
// And the push of 1,000 pending changes to the in-memory server through a counting remote, which
// must take at most three round trips.

func registerSyncRows() {
    let account = SyncAccount(id: "benchmark")

    benchmarkInFreshDirectory("SyncReplica: a synced key's save", configuration: .smallSaves) { directory in
        let server = InMemorySyncServer()
        let replica = try SyncReplica(directory: directory, account: account, remote: server.remote(for: account))
        let key = replica.store("theme", as: String.self)
        try await key.save("warm")
        return key
    } measure: { benchmark, key in
        for _ in benchmark.scaledIterations {
            // Never the value the key holds, which would write nothing.
            try await key.save(UUID().uuidString)
        }
    }

    benchmarkInFreshDirectory(
        "SyncReplica: a synced key's save, floor: SettingsFile key save", configuration: .smallSaves
    ) { directory in
        let key = SettingsFile(directory.appending(path: "settings.plist")).store("theme", as: String.self)
        try await key.save("warm")
        return key
    } measure: { benchmark, key in
        for _ in benchmark.scaledIterations {
            try await key.save(UUID().uuidString)
        }
    }

    benchmarkInFreshDirectory(
        "SyncReplica: 1,000 pending changes pushed", configuration: .fileWork(iterations: 5, seconds: 30)
    ) { directory in
        directory
    } measure: { benchmark, directory in
        // Each sample: a fresh replica with 1,000 pending changes (not measured), then the sync.
        let server = InMemorySyncServer()
        let inner = server.remote(for: account)
        let requests = Atomic(0)
        let counting = SyncRemote(
            label: "counting",
            push: { request in
                requests.add(1, ordering: .relaxed)
                return try await inner.push(request)
            },
            pull: { request in
                requests.add(1, ordering: .relaxed)
                return try await inner.pull(request)
            })
        var options = SyncOptions()
        options.fileOptions = .cache
        let folder = directory.appending(path: UUID().uuidString, directoryHint: .isDirectory)
        let replica = try SyncReplica(directory: folder, account: account, remote: counting, options: options)
        try await replica.syncNow()
        for index in 0..<1_000 {
            try await replica.store("key\(index)", as: Int.self).save(index)
        }
        requests.store(0, ordering: .relaxed)
        benchmark.startMeasurement()
        try await replica.syncNow()
        benchmark.stopMeasurement()
        try expect(replica.status.pendingChanges == 0, "every change is pushed")
        try expect(requests.load(ordering: .relaxed) <= 3, "1,000 pending changes take at most 3 round trips")
    }
}
