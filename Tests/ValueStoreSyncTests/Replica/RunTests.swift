import Foundation
import Testing
import ValueStore
import ValueStoreSync

/// `run()`: pushes and pulls on its own, and is quiet while idle.
@Suite struct RunTests {
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
            var states = laptop.store("theme", as: String.self).changes().makeAsyncIterator()
            _ = await states.next()
            try await phone.store("theme", as: String.self).save("dark")
            try await phone.waitUntilPushed()
            var seen: String?
            while seen != "dark", let state = await states.next() {
                seen = state.value
            }
            #expect(seen == "dark")
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
            try await phone.waitUntilPushed()
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
            while faulty.requests < 3 {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(phone.status.pendingChanges == 1)
            faulty.always(.pass)
            try await phone.waitUntilPushed()
            // A change made on another device arrives by polling.
            let laptop = try sandbox.replica("laptop")
            try await laptop.store("fontSize", as: Int.self).save(16)
            try await laptop.syncNow()
            var states = phone.store("fontSize", as: Int.self).changes().makeAsyncIterator()
            var size: Int?
            while size != 16, let state = await states.next() {
                size = state.value
            }
            #expect(size == 16)
        }
    }
}
