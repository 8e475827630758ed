import Foundation
import Testing
import ValueStoreTestSupport

@testable import ValueStore

#if canImport(Glibc)
import Glibc
#endif

/// A file update runs its body with no lock held, and commits only if nothing wrote the file
/// since it was read; otherwise it runs the body again on the newer value.
@Suite struct FileUpdateTests {
    // MARK: - No lock while the body runs

    @Test func noFileLockIsHeldWhileTheBodyRuns() async throws {
        try await TemporaryDirectory.with { directory in
            let store = ValueStore<Void, Int>.jsonFile(directory.appending(path: "count.json")).default(0)
            try await store.save(1)
            let lockPath = directory.appending(path: ".count.json.lock").path(percentEncoded: false)
            var lockWasFree = false
            try await store.update { value in
                // Another open file, as another process would hold: its lock must be free.
                let descriptor = open(lockPath, O_RDWR | O_CLOEXEC)
                defer { close(descriptor) }
                lockWasFree = descriptor >= 0 && flock(descriptor, LOCK_EX | LOCK_NB) == 0
                value += 1
            }
            #expect(lockWasFree, "iOS terminates a suspended app that holds a file lock")
            #expect(try await store.load() == 2)
        }
    }

    /// A child this process spawns holds a copy of every open descriptor until it starts its
    /// program (and a forked child that never does, for its life): a lock released only by
    /// closing would stay held by that copy. A copy of each lock descriptor, kept open, stands
    /// in for the child.
    @Test func aLockIsReleasedWhileACopyOfItsDescriptorIsStillOpen() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let lockPath = directory.appending(path: ".count.json.lock").path(percentEncoded: false)
            let copies = Shared<[Int32]>([])
            var fileSystem = FileSystem.live
            fileSystem.open = { path, flags, mode in
                let descriptor = try FileSystem.live.open(path, flags, mode)
                if path == lockPath {
                    copies.append(dup(descriptor))
                }
                return descriptor
            }
            defer {
                for copy in copies.value { close(copy) }
            }
            let store = ValueStore<Void, Data>.file(url, options: .default, fileSystem: fileSystem).coded(
                Codec<Int, Data>.json)
            func lockIsFree() -> Bool {
                let other = open(lockPath, O_RDWR | O_CLOEXEC)
                defer { close(other) }
                return other >= 0 && flock(other, LOCK_EX | LOCK_NB) == 0
            }
            try await store.save(1)
            // Checked before the next write, which would otherwise wait for the lock forever.
            try #require(lockIsFree(), "the save's lock is free though a copy is open")
            try await store.update { $0 += 1 }
            #expect(lockIsFree(), "the update's lock is free though copies are open")
            #expect(copies.value.count >= 2, "the save and the update each opened the lock file")
            #expect(try await store.load() == 2)
        }
    }

    @Test func anotherProcessWritesWhileTheBodyWaitsAndTheBodyRunsAgain() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let store = ValueStore<Void, Int>.jsonFile(url)
            try await store.save(1)
            var seen: [Int] = []
            var helperFinished = false
            let stored = try await store.update { value in
                seen.append(value)
                if seen.count == 1 {
                    let helper = try HelperProcess("save-json", url.path(percentEncoded: false), "10")
                    helperFinished = await eventually { !helper.process.isRunning }
                    if !helperFinished { helper.kill() }
                }
                value += 1
            }
            #expect(helperFinished, "the other process saved while the body waited")
            #expect(seen == [1, 10], "the body ran again on the other process's value")
            #expect(stored == 11)
            #expect(try await store.load() == 11)
        }
    }

    // MARK: - What the commit compares

    @Test func aWriteThatKeepsTheFilesSizeInodeAndTimeIsStillSeen() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            // A file system whose inodes are reused and whose clock is coarse: every version of
            // the file looks the same to `stat`.
            var fileSystem = FileSystem.live
            fileSystem.status = { descriptor in
                var status = try FileSystem.live.status(descriptor)
                (status.inode, status.modified) = (42, 0)
                return status
            }
            fileSystem.pathStatus = { path in
                var status = try FileSystem.live.pathStatus(path)
                (status.inode, status.modified) = (42, 0)
                return status
            }
            let store = ValueStore<Void, Data>.file(url, options: .default, fileSystem: fileSystem)
                .coded(Codec<Int, Data>.json)
            let other = ValueStore<Void, Int>.jsonFile(url)
            try await other.save(1)
            var seen: [Int] = []
            try await store.update { value in
                seen.append(value)
                if seen.count == 1 {
                    // The same size as "1"; a detached task is not nested in this update.
                    _ = try await Task.detached { try await other.save(5) }.value
                }
                value += 1
            }
            #expect(seen == [1, 5], "the stamp in the lock file showed the write")
            #expect(try await other.load() == 6)
        }
    }

    @Test func aFileWrittenAndRemovedWhileTheBodyRanIsNoticed() async throws {
        try await TemporaryDirectory.with { directory in
            let oldURL = directory.appending(path: "old.json")
            let newURL = directory.appending(path: "new.json")
            try await ValueStore<Void, Int>.jsonFile(oldURL).save(7)
            let old = Stall.firstLoad(of: .jsonFile(oldURL))
            let store = ValueStore<Void, Int>.jsonFile(newURL).replacing(old.store)
            // Reads "no new file", then the old value, and stalls inside its body.
            let stalled = Task { try await store.update { $0 += 1 } }
            await old.reached()
            #expect(try await store.load() == 7, "another migration moves the value")
            try await store.remove()  // and it is removed: the new file is absent again
            old.resume()
            await #expect(throws: ValueStoreError.notFound) { try await stalled.value }
            #expect(try await ValueStore<Void, Int>.jsonFile(newURL).optional().load() == nil)
        }
    }

    // MARK: - Writes nested in the body

    @Test func aWriteToTheSameFileFromInsideTheBodyThrowsAtOnce() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let store = ValueStore<Void, Int>.jsonFile(url).default(0)
            try await store.save(1)
            let outcome = await unlessItHangs {
                try await store.update { value in
                    try await ValueStore<Void, Int>.jsonFile(url).save(5)  // a second store, same file
                    value += 1
                }
            }
            let error = try #require(outcome, "the nested save finished").failure
            #expect(error as? ValueStoreError == .nestedWrite)
            #expect(try await store.load() == 1, "nothing was written")
        }
    }

    @Test func anUpdateOfTheSameFileFromInsideTheBodyThrowsAtOnce() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let store = ValueStore<Void, Int>.jsonFile(url).default(0)
            let outcome = await unlessItHangs {
                try await store.update { value in
                    try await store.update { $0 += 10 }
                    value += 1
                }
            }
            let error = try #require(outcome, "the nested update finished").failure
            #expect(error as? ValueStoreError == .nestedWrite)
            #expect(try await store.load() == 0)
        }
    }

    @Test func aTaskStartedInTheBodyWritesOnItsOwnOnceTheBodyReturned() async throws {
        try await TemporaryDirectory.with { directory in
            let store = ValueStore<Void, Int>.jsonFile(directory.appending(path: "count.json")).default(0)
            let (gate, open) = AsyncStream.makeStream(of: Void.self)
            var late: Task<Int, any Error>?
            try await store.update { value in
                late = Task {
                    for await _ in gate { break }
                    return try await store.save(9)
                }
                value = 2
            }
            open.yield()
            #expect(try await late?.value == 9)
            #expect(try await store.load() == 9)
        }
    }

    // MARK: - Opposing moves

    @Test func opposingMovesFinishAndLeaveOneValue() async throws {
        try await TemporaryDirectory.with { directory in
            // Relaxed durability: the moves' order matters here, not their syncs.
            let a = ValueStore<Void, Int>.jsonFile(directory.appending(path: "a.json"), options: .cache)
            let b = ValueStore<Void, Int>.jsonFile(directory.appending(path: "b.json"), options: .cache)
            for round in 0..<10 {
                try await a.save(round * 2)
                try await b.save(round * 2 + 1)
                let outcome = await unlessItHangs(timeout: .seconds(60)) {
                    async let there = a.move(to: b)
                    async let back = b.move(to: a)
                    return try await [there, back]
                }
                _ = try #require(outcome, "round \(round): the moves finished").get()
                let left = [try await a.optional().load(), try await b.optional().load()].compactMap { $0 }
                #expect(left.count == 1, "round \(round): one store holds a value, the other none")
                #expect(left.allSatisfy { $0 / 2 == round }, "round \(round): one of the two values")
            }
        }
    }

    @Test func aValueSavedWhileAMoveRunsIsNeverRemoved() async throws {
        try await TemporaryDirectory.with { directory in
            let source = ValueStore<Void, Int>.jsonFile(directory.appending(path: "source.json"))
            let target = Stall.firstSave(of: .jsonFile(directory.appending(path: "target.json")))
            try await source.save(7)
            let move = Task { try await source.move(to: target.store) }
            await target.reached()
            try await source.save(99)  // while the move is between its save and its remove
            target.resume()
            #expect(try await move.value == 99, "the move ran again and moved the newer value")
            #expect(try await source.optional().load() == nil)
            #expect(try await target.store.load() == 99)
        }
    }
}

extension Result {
    /// The error, or `nil` for a success.
    var failure: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}
