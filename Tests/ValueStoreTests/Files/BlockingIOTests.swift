import Dispatch
import Foundation
import Testing

@testable import ValueStore

/// Blocking system calls run on the I/O threads (``BlockingIO``): a disk that holds every durable
/// write in `fsync` holds none of the threads other tasks run on, and every system call of a
/// store runs there.
@Suite(.timeLimit(.minutes(2))) struct BlockingIOTests {
    /// Each kind of file store, as a store of strings, and how many of its writes wait for the
    /// next commit of its file.
    enum Kind: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case file, jsonFile, settingsFile, encryptedFile

        var testDescription: String { rawValue }

        func store(_ url: URL, _ fileSystem: FileSystem) -> (ValueStore<Void, String>, waiting: @Sendable () -> Int) {
            let commitKey = DurableFile(url, options: .default, fileSystem: .live).commitKey
            let queued: @Sendable () -> Int = { CommitQueue.shared.waitingWrites(for: commitKey) }
            switch self {
            case .file:
                let store = ValueStore<Void, Data>.file(url, options: .default, fileSystem: fileSystem)
                return (store.coded(Codec<String, Data>.json), queued)
            case .jsonFile:
                let store = ValueStore<Void, String>.jsonFile(
                    url, encoder: JSONEncoder(), decoder: JSONDecoder(), options: .default, fileSystem: fileSystem)
                return (store, queued)
            case .settingsFile:
                let settings = SettingsFile(url, options: .default, fileSystem: fileSystem)
                return (settings.store("value", as: String.self), { settings.state.withLock { $0.pending.count } })
            case .encryptedFile:
                let store = ValueStore<EncryptionKeyring, Data>
                    .encryptedFile(url, identity: nil, durability: .durable, fileSystem: fileSystem)
                    .coded(Codec<String, Data>.json)
                    .provide(EncryptionKeyring(current: .random()))
                let sealed = EncryptedFile(url, identity: nil, durability: .durable, fileSystem: .live)
                return (store, { [key = sealed.file.commitKey] in CommitQueue.shared.waitingWrites(for: key) })
            }
        }
    }

    @Test(arguments: Kind.allCases) func writesHeldInFsyncLeaveOtherTasksRunning(_ kind: Kind) async throws {
        try await TemporaryDirectory.with { directory in
            // More writes than the cooperative pool has threads (one per core), and than the I/O
            // threads kept: all of them held at once.
            let writes = max(BlockingIO.threadCount, ProcessInfo.processInfo.activeProcessorCount) + 1
            let gate = FsyncGate(holding: writes + 1)
            let stores = (0...writes).map { index in
                kind.store(directory.appending(path: "held-\(index)"), gate.fileSystem)
            }
            let memory = ValueStore<Void, Int>.inMemory(7)
            let cached = ValueStore<Void, Int>.inMemory(8).cached()
            #expect(try await cached.load() == 8)
            let other = ValueStore<Void, Data>.file(directory.appending(path: "other.json"))
            try await other.save(Data("other".utf8))

            let held = (0..<writes).map { index in
                Task { try await stores[index].0.save("\(index)") }
            }
            // A caller whose write is held too, cancelled while it waits.
            let cancelled = Task { try await stores[writes].0.save("cancelled") }
            let allHeld = await gate.allHeld.wait()
            #expect(allHeld == true, "every write must reach fsync and be held there")
            cancelled.cancel()
            // A caller waiting for the next commit of a file whose write is held, cancelled.
            let waiting = Task { try await stores[0].0.save("waited") }
            #expect(await eventually { stores[0].waiting() == 1 }, "the save must wait for the held write")
            waiting.cancel()

            // Held: other tasks run, and so does a load of a file on another disk's threads.
            #expect(try await memory.load() == 7)
            #expect(try await cached.load() == 8)
            #expect(try await other.load() == Data("other".utf8))
            #expect(gate.isHolding, "the loads must have run while every write was held")

            gate.open()
            for task in held {
                _ = try await task.value
            }
            // The cancelled callers return once their writes are done, and say they saved: the
            // writes landed, so they are not reported as failed.
            await #expect(throws: Never.self) { _ = try await cancelled.value }
            await #expect(throws: Never.self) { _ = try await waiting.value }
            #expect(try await stores[writes].0.load() == "cancelled")
            #expect(try await stores[0].0.load() == "waited")
            #expect(!gate.timedOut, "no write may have been held until the gate's bound")
            #expect(gate.heldOffIOThreads == 0, "a held write must hold an I/O thread, not the cooperative pool's")
        }
    }

    @Test func everySystemCallOfAStoreRunsOnAnIOThread() async throws {
        try await TemporaryDirectory.with { directory in
            let calls = SystemCalls()
            let file = ValueStore<Void, Data>
                .file(directory.appending(path: "nested/count.json"), options: .default, fileSystem: calls.fileSystem)
                .coded(Codec<Int, Data>.json)
                .default(0)
            // A load is a brief read, which may run on the pool (see BriefReads): none here.
            try await file.save(1)
            #expect(try await file.update { $0 += 1 } == 2)
            try await file.remove()

            let json = ValueStore<Void, Int>.jsonFile(
                directory.appending(path: "count.json"), encoder: JSONEncoder(), decoder: JSONDecoder(),
                options: .default, fileSystem: calls.fileSystem
            )
            try await json.save(1)
            #expect(try await json.update { $0 += 1 } == 2)
            try await json.remove()

            let settings = SettingsFile(
                directory.appending(path: "settings.plist"), options: .default, fileSystem: calls.fileSystem)
            let fontSize = settings.store("fontSize", as: Int.self).default(14)
            #expect(try await fontSize.load() == 14)
            try await fontSize.save(15)
            #expect(try await fontSize.update { $0 += 1 } == 16)
            try await settings.batch { batch in try batch.set("dark", for: "theme") }
            try await fontSize.remove()

            let secret = ValueStore<EncryptionKeyring, Data>
                .encryptedFile(
                    directory.appending(path: "secret"), identity: nil, durability: .durable,
                    fileSystem: calls.fileSystem
                )
                .coded(Codec<String, Data>.json)
                .provide(EncryptionKeyring(current: .random()))
            try await secret.save("sk_live_1")
            // A load is a brief read, which may run on the pool (see BriefReadsTests): it only
            // opens, reads and closes there.
            let beforeLoad = calls.offIOThreads.count
            #expect(try await secret.load() == "sk_live_1")
            let loadCalls = Set(calls.offIOThreads.dropFirst(beforeLoad))
            #expect(loadCalls.isSubset(of: ["open", "fstat", "read", "close"]))
            let afterLoad = calls.offIOThreads.count
            #expect(try await secret.update { $0 += "2" } == "sk_live_12")
            try await secret.remove()

            #expect(calls.count > 30, "the stores must have gone through the witness")
            #expect(calls.offIOThreads.count == afterLoad, "only the load's reads ran off the I/O threads")
            #expect(calls.offIOThreads.count == afterLoad - beforeLoad)
        }
    }
}

/// The live file system, holding every `fsync` until the test opens the gate: the holding runs on
/// the thread that called `fsync`, which is what the test is about, never on the test's own.
/// Bounded: a write held for 15 seconds goes through, and the gate says it timed out.
private final class FsyncGate: Sendable {
    private struct State {
        var held = 0
        var isOpen = false
        var timedOut = false
    }

    private let state = Locked(State())
    private let holdsOffIOThreads = Locked(0)
    private let release = DispatchSemaphore(value: 0)
    private let target: Int
    /// Delivered once `target` calls are held at once.
    let allHeld = Arrival<Bool>()

    init(holding target: Int) {
        self.target = target
    }

    var isHolding: Bool { state.withLock { !$0.isOpen && !$0.timedOut && $0.held >= target } }
    var timedOut: Bool { state.withLock { $0.timedOut } }
    /// How many writes were held on a thread that is not an I/O thread.
    var heldOffIOThreads: Int { holdsOffIOThreads.withLock { $0 } }

    func open() {
        let held = state.withLock { state in
            state.isOpen = true
            return state.held
        }
        for _ in 0..<held {
            release.signal()
        }
    }

    /// Holds the calling thread until the gate opens, or 15 seconds pass.
    private func hold() {
        let (mustWait, allHeld) = state.withLock { state -> (Bool, Bool) in
            guard !state.isOpen, !state.timedOut else { return (false, false) }
            state.held += 1
            return (true, state.held == target)
        }
        guard mustWait else { return }
        if !BlockingIO.isCurrentThread {
            holdsOffIOThreads.withLock { $0 += 1 }
        }
        if allHeld {
            self.allHeld.deliver(true)
        }
        if release.wait(timeout: .now() + 15) == .timedOut {
            state.withLock { $0.timedOut = true }
        }
    }

    var fileSystem: FileSystem {
        var fileSystem = FileSystem.live
        let live = FileSystem.live
        fileSystem.synchronize = { descriptor in
            // Only the files' own flushes, not their directories': one hold per write.
            if try live.status(descriptor).isRegularFile {
                self.hold()
            }
            try live.synchronize(descriptor)
        }
        return fileSystem
    }
}
