import Foundation
import Testing
import ValueStoreTestSupport

/// The helper processes the tests start leave no descriptor open behind them.
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
}
