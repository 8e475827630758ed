import Foundation
import Synchronization
import Testing
import ValueStore
import ValueStoreSync
import ValueStoreTestSupport

/// `run()`: pushes and pulls on its own, and is quiet while idle.
@Suite(.timeLimit(.minutes(2))) struct RunTests {
    @Test func runningReplicasDeliverEachOthersChanges() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            let laptop = try sandbox.replica("laptop")
            let phoneSync = Task { try await phone.run() }
            let laptopSync = Task { try await laptop.run() }
            defer {
                phoneSync.cancel()
                laptopSync.cancel()
            }
            let states = laptop.store("theme", as: String.self).changes()
            try await phone.store("theme", as: String.self).save("dark")
            try await within(.seconds(30), "the phone's push") { try await phone.waitUntilPushed() }
            #expect(try await delivered("dark", to: states, "the laptop's stream showing the phone's save"))
        }
    }

    @Test func aChangePushedRightAfterTheFirstPullIsDelivered() async throws {
        try await SyncSandbox.with { sandbox in
            let laptop = try sandbox.replica("laptop")
            let inner = sandbox.server.remote(for: sandbox.account)
            let subscribed = Mutex(false)
            let pulls = Mutex(0)
            // Another device pushes right after the phone's first sync pulled, before that
            // pull's answer arrives: a run() that subscribes to the pokes after its first pull
            // misses the push's poke, and, its pokes being alive, never polls for it.
            let remote = SyncRemote(
                label: "pushed to right after the first pull",
                push: { try await inner.push($0) },
                pull: { request in
                    let response = try await inner.pull(request)
                    // The first round's last pull: its pull to the head, after its whole-state
                    // pull.
                    if !request.isResync,
                        pulls.withLock({ pulls in
                            pulls += 1
                            return pulls == 1
                        })
                    {
                        #expect(subscribed.withLock { $0 }, "run() must subscribe to the pokes before its first pull")
                        try await laptop.store("theme", as: String.self).save("dark")
                        try await laptop.syncNow()
                    }
                    return response
                },
                pokes: {
                    subscribed.withLock { $0 = true }
                    return inner.pokes()
                })
            let phone = try sandbox.replica("phone", remote: remote)
            let syncing = Task { try await phone.run() }
            defer { syncing.cancel() }
            let states = phone.store("theme", as: String.self).changes()
            #expect(try await delivered("dark", to: states, "the phone's stream showing the laptop's save"))
        }
    }

    /// Two runs of one replica (two windows' tasks): the second, started and ended while the
    /// first runs, leaves the first syncing. It used to take the replica's one doorbell and
    /// leave none when it ended: the first run heard no ring again, and saves stayed pending.
    @Test func aSecondRunThatEndsLeavesTheFirstSyncing() async throws {
        try await SyncSandbox.with { sandbox in
            let inner = sandbox.server.remote(for: sandbox.account)
            let (pulls, pulled) = AsyncStream<Void>.makeStream()
            let remote = SyncRemote(
                label: "telling its pulls", push: { try await inner.push($0) },
                pull: { request in
                    defer { pulled.yield() }
                    return try await inner.pull(request)
                },
                authoredPokes: { inner.authoredPokes() })
            let phone = try sandbox.replica("phone", remote: remote)
            var pullsMade = pulls.makeAsyncIterator()
            let first = Task { try await phone.run() }
            defer { first.cancel() }
            _ = await pullsMade.next()  // the first run rang, and synced
            let second = Task { try await phone.run() }
            _ = await pullsMade.next()  // so did the second
            second.cancel()
            _ = await second.result
            try await phone.store("theme", as: String.self).save("dark")
            try await within(.seconds(30), "the first run's push") { try await phone.waitUntilPushed() }
            #expect(phone.status.pendingChanges == 0)
        }
    }

    /// Two runs, and the one that took a save fails its push and is cancelled as it backs off:
    /// the save goes to the other run, which pushes it (the ending run hands back what it took,
    /// and its ended pokes ring a pull, whose round pushes too).
    @Test func aRunThatEndsAfterAFailedPushLeavesTheSaveToTheOther() async throws {
        try await SyncSandbox.with { sandbox in
            let inner = sandbox.server.remote(for: sandbox.account)
            let failedOnce = Mutex(false)
            let (pulls, pulled) = AsyncStream<Void>.makeStream()
            let (failures, failure) = AsyncStream<String>.makeStream()
            let remote = SyncRemote(
                label: "failing one push",
                push: { request in
                    let fails = failedOnce.withLock { failed in
                        defer { failed = failed || !request.changes.isEmpty }
                        return !failed && !request.changes.isEmpty
                    }
                    if fails {
                        failure.yield(RunName.name)
                        throw ValueStoreError(.unavailable, store: "failing one push")
                    }
                    return try await inner.push(request)
                },
                pull: { request in
                    defer { pulled.yield() }
                    return try await inner.pull(request)
                },
                authoredPokes: { inner.authoredPokes() })
            var options = SyncSandbox.options()
            options.retryDelay = .seconds(60)
            let phone = try sandbox.replica("phone", remote: remote, options: options)
            var pullsMade = pulls.makeAsyncIterator()
            var runs: [String: Task<Void, any Error>] = [:]
            for name in ["first", "second"] {
                runs[name] = Task { try await RunName.$name.withValue(name) { try await phone.run() } }
                _ = await pullsMade.next()  // it rang, and synced
            }
            defer {
                for run in runs.values { run.cancel() }
            }
            try await phone.store("theme", as: String.self).save("dark")
            var failed = failures.makeAsyncIterator()
            let failing = try #require(await failed.next())
            runs[failing]?.cancel()
            try await within(.seconds(30), "the other run's push") { try await phone.waitUntilPushed() }
        }
    }

    @Test func anIdleReplicaWithLivePokesMakesNoRequests() async throws {
        try await SyncSandbox.with { sandbox in
            let faulty = FaultyRemote(sandbox.server.remote(for: sandbox.account))
            var options = SyncSandbox.options()
            options.pollInterval = .milliseconds(20)  // would poll many times, were pokes dead
            let phone = try sandbox.replica("phone", remote: faulty.remote, options: options)
            let syncing = Task { try await phone.run() }
            defer { syncing.cancel() }
            try await phone.store("theme", as: String.self).save("dark")
            try await within(.seconds(30), "the phone's push") { try await phone.waitUntilPushed() }
            // Let the poke of its own push be answered, then count over an idle stretch.
            var before = -1
            while before != faulty.requests {
                before = faulty.requests
                try await Task.sleep(for: .milliseconds(100))
            }
            try await Task.sleep(for: .milliseconds(300))
            #expect(faulty.requests == before)
        }
    }

    @Test func theWriterDoesNotPullAfterItsOwnPushWhenNothingElseChanged() async throws {
        try await SyncSandbox.with { sandbox in
            let inner = sandbox.server.remote(for: sandbox.account)
            let counts = PullsAndPokes()
            // Counts the pulls, noting the cursor each starts from, and how many pokes run()
            // has taken: it asks for the next one once it has rung for the last.
            let remote = SyncRemote(
                label: "counted", push: { try await inner.push($0) },
                pull: { request in
                    counts.pulled(from: request.cursor)
                    return try await inner.pull(request)
                },
                authoredPokes: {
                    let pokes = PokeSource(inner.authoredPokes())
                    return AsyncStream(unfolding: {
                        counts.askedForPoke()
                        return await pokes.next()
                    })
                })
            let phone = try sandbox.replica("phone", remote: remote)
            let syncing = Task { try await phone.run() }
            defer { syncing.cancel() }
            // run()'s first sync pulls from the empty history; then every push is the phone's.
            try await within(.seconds(30), "the phone's first pull") {
                while counts.pulls.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
            }
            let theme = phone.store("theme", as: String.self)
            for (index, value) in ["dark", "light", "sepia"].enumerated() {
                try await theme.save(value)
                try await within(.seconds(30), "the phone's push of \(value)") { try await phone.waitUntilPushed() }
                // The echo of this push rung before the next save: run() asked for the poke after it.
                try await within(.seconds(30), "run() taking the poke of the phone's push of \(value)") {
                    while counts.pokesAskedFor < index + 2 { try await Task.sleep(for: .milliseconds(5)) }
                }
            }
            // Another device's change is still pulled, and after it the phone's count is read.
            let laptop = try sandbox.replica("laptop")
            try await laptop.store("fontSize", as: Int.self).save(16)
            let echoes = counts.pulls.filter { $0 > .zero }.count
            try await laptop.syncNow()
            let states = phone.store("fontSize", as: Int.self).changes()
            #expect(try await delivered(16, to: states, "the phone's stream showing the laptop's save"))
            #expect(echoes == 0, "the phone pulled \(echoes) times after its own pushes, with nothing else changed")
        }
    }

    @Test func withoutPokesItPollsAndAfterFailuresItTriesAgain() async throws {
        try await SyncSandbox.with { sandbox in
            let inner = sandbox.server.remote(for: sandbox.account)
            let faulty = FaultyRemote(
                SyncRemote(label: "no pokes", push: { try await inner.push($0) }, pull: { try await inner.pull($0) }))
            faulty.always(.dropRequest)
            var options = SyncSandbox.options()
            options.pollInterval = .milliseconds(10)
            options.retryDelay = .milliseconds(5)
            options.maximumRetryDelay = .milliseconds(20)
            let phone = try sandbox.replica("phone", remote: faulty.remote, options: options)
            let syncing = Task { try await phone.run() }
            defer { syncing.cancel() }
            try await phone.store("theme", as: String.self).save("dark")
            try await within(.seconds(30), "three tries") {
                while faulty.requests < 3 {
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
            #expect(phone.status.pendingChanges == 1)
            faulty.always(.pass)
            try await within(.seconds(30), "the phone's push") { try await phone.waitUntilPushed() }
            // A change made on another device arrives by polling.
            let laptop = try sandbox.replica("laptop")
            try await laptop.store("fontSize", as: Int.self).save(16)
            try await laptop.syncNow()
            let states = phone.store("fontSize", as: Int.self).changes()
            #expect(try await delivered(16, to: states, "the phone's stream showing the laptop's save, by polling"))
        }
    }
}

/// What a counting remote saw: the cursor of every pull, and how many pokes its consumer asked for.
final class PullsAndPokes: Sendable {
    private let state = Mutex((pulls: [ServerVersion](), pokesAskedFor: 0))

    var pulls: [ServerVersion] { state.withLock { $0.pulls } }
    var pokesAskedFor: Int { state.withLock { $0.pokesAskedFor } }

    func pulled(from cursor: ServerVersion) {
        state.withLock { $0.pulls.append(cursor) }
    }

    func askedForPoke() {
        state.withLock { $0.pokesAskedFor += 1 }
    }
}

/// One stream's pokes, handed out one call at a time.
actor PokeSource {
    private var iterator: AsyncStream<SyncPoke>.Iterator

    init(_ pokes: AsyncStream<SyncPoke>) {
        iterator = pokes.makeAsyncIterator()
    }

    func next() async -> SyncPoke? {
        var taken = iterator
        let poke = await taken.next(isolation: self)
        iterator = taken
        return poke
    }
}

/// The name of the `run()` a task runs, for a remote that tells runs apart.
enum RunName {
    @TaskLocal static var name = ""
}
