import Dispatch
import Foundation
import Synchronization
import Testing
import ValueStoreTestSupport

/// The helper processes the tests start leave no descriptor open behind them, and waiting for
/// one holds none of the cooperative pool's threads.
@Suite(.timeLimit(.minutes(2))) struct HelperProcessTests {
    /// The inode of what is open at `descriptor`; `nil` when nothing is.
    private func inode(at descriptor: Int32) -> UInt64? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        return UInt64(info.st_ino)
    }

    @Test func aFinishedHelpersPipesAreClosed() async throws {
        var held: [(descriptor: Int32, inode: UInt64?)] = []
        do {
            let helper = try HelperProcess("sync-read")  // a usage error: it exits at once
            #expect(await helper.exitStatus() == 64)
            _ = helper.lines()
            held = helper.descriptors.map { ($0, inode(at: $0)) }
        }
        #expect(held.count == 2 && held.allSatisfy { $0.inode != nil })
        for (descriptor, pipe) in held {
            // Closed, or reused by another test for another file.
            #expect(inode(at: descriptor) != pipe, "descriptor \(descriptor) is still open")
        }
    }

    /// Waiting for a helper's next line holds no thread of the cooperative pool: more readers
    /// than the pool has threads wait at once, and another task still runs. Bounded off the
    /// pool: after 20 seconds a GCD timer answers every helper, so that readers holding the
    /// pool's threads let go and the test fails by name instead of hanging.
    @Test func waitingForAHelpersLineHoldsNoPoolThread() async throws {
        // A path that names nothing: each line sent to the helper is answered "notFound".
        let missing = FileManager.default.temporaryDirectory
            .appending(path: "HelperProcessTests-\(UUID().uuidString)/missing.json").path(percentEncoded: false)
        let helpers = try (0...ProcessInfo.processInfo.activeProcessorCount).map { _ in
            try HelperProcess("move-each-line", missing, missing)
        }
        let rescue = Rescue()
        let bound = DispatchWorkItem {
            rescue.happened.withLock { $0 = true }
            for helper in helpers {
                try? helper.send("late")
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + 20, execute: bound)
        let readers = helpers.map { helper in Task { await helper.nextLine() } }
        let other = await Task.detached { 42 }.value
        bound.cancel()
        #expect(other == 42)
        #expect(!rescue.happened.withLock { $0 }, "a task waited for the readers: they held the pool's threads")
        for helper in helpers {
            try helper.send("go")
        }
        for reader in readers {
            #expect(await reader.value == "notFound")
        }
        for helper in helpers {
            helper.process.terminate()
            _ = await helper.exitStatus()
        }
    }

    /// Whether the test's bound had to answer the helpers.
    private final class Rescue: Sendable {
        let happened = Mutex(false)
    }
}
