import Dispatch
import Foundation
import Testing

@testable import ValueStore

/// Blocking work never runs on the caller's executor: a `@MainActor` caller loads, saves,
/// updates and removes through file and encrypted stores, and a file-system witness records every
/// system call made on the main thread.
@Suite struct ExecutorTests {
    @Test @MainActor func fileStoresNeverBlockTheMainThread() async throws {
        #expect(isOnMainActorThread(), "the check must see the main actor to prove anything")
        try await TemporaryDirectory.with { directory in
            let calls = SystemCalls()
            let store = ValueStore<Void, Data>
                .file(directory.appending(path: "nested/count.json"), options: .default, fileSystem: calls.fileSystem)
                .coded(Codec<Int, Data>.json)
                .default(0)
            await #expect(throws: Never.self) { try await store.load() }
            try await store.save(1)
            #expect(try await store.load() == 1)
            #expect(try await store.update { $0 += 1 } == 2)
            try await store.remove()
            try await store.remove()
            #expect(calls.count > 10, "the store must have gone through the witness")
            #expect(calls.onMainThread == [])
        }
    }

    @Test @MainActor func encryptedStoresNeverBlockTheMainThread() async throws {
        #expect(isOnMainActorThread())
        try await TemporaryDirectory.with { directory in
            let calls = SystemCalls()
            let store = ValueStore<EncryptionKeyring, Data>
                .encryptedFile(
                    directory.appending(path: "secret"), identity: nil, durability: .durable,
                    fileSystem: calls.fileSystem
                )
                .coded(Codec<String, Data>.json)
                .provide(EncryptionKeyring(current: .random()))
            try await store.save("sk_live_1")
            #expect(try await store.load() == "sk_live_1")
            #expect(try await store.update { $0 += "2" } == "sk_live_12")
            try await store.remove()
            await #expect(throws: ValueStoreError.notFound) { try await store.load() }
            #expect(calls.count > 10)
            #expect(calls.onMainThread == [])
        }
    }

    @Test @MainActor func keyFilesAndSaltFilesNeverBlockTheMainThread() async throws {
        #expect(isOnMainActorThread())
        try await TemporaryDirectory.with { directory in
            let calls = SystemCalls()
            let keyFile = DurableFile(
                directory.appending(path: "data.key"), options: .private, fileSystem: calls.fileSystem)
            let created = try await EncryptionKey.loadOrCreate(keyFile)
            #expect(try await EncryptionKey.loadOrCreate(keyFile).id == created.id)
            // The same function reads the salt file and runs PBKDF2.
            let saltFile = DurableFile(
                directory.appending(path: "vault.salt"), options: .private, fileSystem: calls.fileSystem)
            let derived = try await EncryptionKey.derived(
                fromPassphrase: "correct horse",
                saltFile: saltFile,
                iterations: EncryptionKey.minimumIterations
            )
            #expect(derived.id.isEmpty == false)
            #expect(calls.count > 10)
            #expect(calls.onMainThread == [])
        }
    }

    @Test @MainActor func settingsFilesNeverBlockTheMainThread() async throws {
        #expect(isOnMainActorThread())
        try await TemporaryDirectory.with { directory in
            let calls = SystemCalls()
            let settings = SettingsFile(
                directory.appending(path: "settings.plist"), options: .default, fileSystem: calls.fileSystem)
            let fontSize = settings.store("fontSize", as: Int.self).default(14)
            #expect(try await fontSize.load() == 14)
            try await fontSize.save(15)
            #expect(try await fontSize.update { $0 += 1 } == 16)
            try await settings.batch { batch in
                try batch.set("dark", for: "theme")
                batch.remove("fontSize")
            }
            let reopened = SettingsFile(
                directory.appending(path: "settings.plist"), options: .default, fileSystem: calls.fileSystem)
            #expect(try await reopened.store("theme", as: String.self).load() == "dark")
            #expect(calls.count > 10)
            #expect(calls.onMainThread == [])
        }
    }

    @Test @MainActor func followingChangesNeverBlocksTheMainThread() async throws {
        #expect(isOnMainActorThread())
        try await TemporaryDirectory.with { directory in
            let calls = SystemCalls()
            let store = ValueStore<Void, Data>
                .file(directory.appending(path: "count.json"), options: .default, fileSystem: calls.fileSystem)
                .coded(Codec<Int, Data>.json)
                .default(0)
            var states = store.changes().makeAsyncIterator()
            #expect(await states.next()?.summary == "0")
            try await store.save(1)
            #expect(await states.next()?.summary == "1")
            let stored = await StoredValue.loaded(store, default: 0)
            try await stored.set(2)
            #expect(await states.next()?.summary == "2")
            #expect(calls.count > 10)
            #expect(calls.onMainThread == [])
        }
    }

    @Test @MainActor func theWitnessNoticesACallOnTheMainThread() throws {
        let calls = SystemCalls()
        _ = try? calls.fileSystem.open("/nonexistent/for-sure", O_RDONLY, 0)
        #expect(calls.onMainThread == ["open"])
    }
}

/// Whether this code runs on the main thread, or on the thread that is running the main queue,
/// which serves the main actor where the test runner keeps the main thread busy (Linux).
func isOnMainActorThread() -> Bool {
    Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueMarker) == true
}

private let mainQueueMarker: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
}()

/// The live file system, counting every call and naming those made on the main thread, and
/// those made off the I/O threads (see ``BlockingIO``).
final class SystemCalls: Sendable {
    private let state = Locked<(count: Int, onMainThread: [String], offIOThreads: [String])>((0, [], []))

    var count: Int { state.withLock { $0.count } }
    var onMainThread: [String] { state.withLock { $0.onMainThread } }
    var offIOThreads: [String] { state.withLock { $0.offIOThreads } }

    private func note(_ call: String) {
        let isMain = isOnMainActorThread()
        let isIO = BlockingIO.isCurrentThread
        state.withLock { state in
            state.count += 1
            if isMain {
                state.onMainThread.append(call)
            }
            if !isIO {
                state.offIOThreads.append(call)
            }
        }
    }

    var fileSystem: FileSystem {
        let live = FileSystem.live
        return FileSystem(
            open: { path, flags, mode in
                self.note("open")
                return try live.open(path, flags, mode)
            },
            read: { descriptor, buffer in
                self.note("read")
                return try live.read(descriptor, buffer)
            },
            write: { descriptor, buffer in
                self.note("write")
                return try live.write(descriptor, buffer)
            },
            readAt: { descriptor, buffer, offset in
                self.note("pread")
                return try live.readAt(descriptor, buffer, offset)
            },
            writeAt: { descriptor, buffer, offset in
                self.note("pwrite")
                return try live.writeAt(descriptor, buffer, offset)
            },
            status: { descriptor in
                self.note("fstat")
                return try live.status(descriptor)
            },
            pathStatus: { path in
                self.note("stat")
                return try live.pathStatus(path)
            },
            synchronize: { descriptor in
                self.note("fsync")
                try live.synchronize(descriptor)
            },
            synchronizeData: { descriptor in
                self.note("fdatasync")
                try live.synchronizeData(descriptor)
            },
            truncate: { descriptor, length in
                self.note("ftruncate")
                try live.truncate(descriptor, length)
            },
            close: { descriptor in
                self.note("close")
                try live.close(descriptor)
            },
            rename: { source, destination in
                self.note("rename")
                try live.rename(source, destination)
            },
            unlink: { path in
                self.note("unlink")
                try live.unlink(path)
            },
            makeDirectory: { path, mode in
                self.note("mkdir")
                try live.makeDirectory(path, mode)
            },
            lock: { descriptor, wait in
                self.note("flock")
                return try live.lock(descriptor, wait)
            },
            unlock: { descriptor in
                self.note("flock")
                try live.unlock(descriptor)
            },
            contentsOfDirectory: { path in
                self.note("readdir")
                return try live.contentsOfDirectory(path)
            },
            permissions: { path in
                self.note("stat")
                return try live.permissions(path)
            },
            linkTarget: { path in
                self.note("lstat")
                return try live.linkTarget(path)
            },
            changes: live.changes
        )
    }
}
