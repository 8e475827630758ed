import Foundation
import Synchronization
import Testing
import ValueStore
import ValueStoreSync

/// Pushes and pulls whose work grows with the keys, not with their square: counted, never timed
/// (the timings are the benchmark's, `SyncReplica: 100,000 keys pushed`).
@Suite struct SyncCostTests {
    static let keys = 1_000
    static let batch = 20

    /// Small batches and pages, and a journal folded past 4 KB: before, every commit past it
    /// rewrote the settings file, which holds every key.
    static func options() -> SyncOptions {
        var options = SyncSandbox.options()
        options.journalFoldingSize = 4 * 1_024
        options.pushBatchSize = batch
        options.pullPageSize = batch
        return options
    }

    /// Counts the rewrites of `device`'s settings file seen at each request through the remote:
    /// the folds of its journal (one commit folds at most once, and each request follows one).
    final class FoldCounter: Sendable {
        let path: String
        /// The file's size and modification time at the last request.
        let state = Mutex<(last: String?, folds: Int, requests: Int)>((nil, 0, 0))

        init(_ sandbox: SyncSandbox, device: String) {
            path = sandbox.folder(device).appending(path: sandbox.account.id).appending(path: "sync.plist")
                .path(percentEncoded: false)
        }

        func observe() {
            let attributes = try? FileManager.default.attributesOfItem(atPath: path)
            let seen = attributes.map { attributes in
                let date = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
                return "\(attributes[.size] as? Int ?? 0) bytes at \(date)"
            }
            state.withLock { state in
                if state.last != nil, seen != state.last {
                    state.folds += 1
                }
                state.last = seen
                state.requests += 1
            }
        }

        func remote(_ inner: SyncRemote) -> SyncRemote {
            SyncRemote(
                label: "counting folds",
                push: { request in
                    self.observe()
                    return try await inner.push(request)
                },
                pull: { request in
                    self.observe()
                    return try await inner.pull(request)
                })
        }
    }

    @Test func pushingAndPullingManyKeysFoldTheJournalAFewTimes() async throws {
        try await SyncSandbox.with { sandbox in
            let inner = sandbox.server.remote(for: sandbox.account)
            let pushes = FoldCounter(sandbox, device: "phone")
            let pulls = FoldCounter(sandbox, device: "laptop")
            let phone = try sandbox.replica("phone", remote: pushes.remote(inner), options: Self.options())
            let laptop = try sandbox.replica("laptop", remote: pulls.remote(inner), options: Self.options())
            try await syncInTurn(phone, laptop)
            let values = Dictionary(uniqueKeysWithValues: (0..<Self.keys).map { ("key\($0)", Data("\($0)".utf8)) })
            try await phone.change(values, policy: .lastWriterWins)
            pushes.state.withLock { $0 = (nil, 0, 0) }
            pulls.state.withLock { $0 = (nil, 0, 0) }
            try await syncInTurn(phone, laptop)
            pushes.observe()
            pulls.observe()
            #expect(phone.status.pendingChanges == 0)
            #expect(laptop.record(for: "key999")?.value == Data("999".utf8))
            // 50 pushes and 50 pages: a fold each before; a fold past half the settings file's
            // size, which grows with the keys, makes a few.
            let (pushed, pulled) = (pushes.state.withLock { $0 }, pulls.state.withLock { $0 })
            #expect(pushed.requests > Self.keys / Self.batch)
            #expect(pulled.requests > Self.keys / Self.batch)
            #expect(pushed.folds <= 5)
            #expect(pulled.folds <= 15)
        }
    }
}
