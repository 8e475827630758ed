import Foundation
import Testing
import ValueStore
import ValueStoreSync
import ValueStoreTestSupport

/// Two processes on one replica folder, an app and its extension: every save either process
/// acknowledged is kept, and the folder opens.
@Suite(.timeLimit(.minutes(2))) struct SharedFolderTests {
    /// Runs `ValueStoreTestHelper sync-share-loop` saving `name`'s keys in `range`, killed after
    /// `killAfter` acknowledged saves if given; returns the indices it acknowledged.
    private func saveLoop(
        _ directory: URL,
        _ name: String,
        _ range: Range<Int>,
        killAfter: Int?
    ) async throws -> [Int] {
        let helper = try HelperProcess(
            "sync-share-loop", directory.path(percentEncoded: false), name, String(range.lowerBound),
            String(range.upperBound))
        var lines: [String] = []
        if let killAfter {
            for _ in 0..<killAfter {
                guard let line = try await within(.seconds(60), "\(name)'s next save", { await helper.nextLine() })
                else { break }
                lines.append(line)
            }
            helper.kill()
        } else {
            let status = try await within(.seconds(120), "\(name)'s saves") { await helper.exitStatus() }
            #expect(status == 0, "\(name) failed")
        }
        return (lines + helper.lines()).compactMap { Int($0) }
    }

    @Test func twoOfflineProcessesKeepEverySaveThroughKills() async throws {
        try await SyncSandbox.with { sandbox in
            let directory = sandbox.folder("device")
            var acknowledged: [String: [Int]] = [:]
            // Five rounds of 60 saves each: 300 keys per process; some rounds kill one of them
            // partway, in the middle of an append or a fold.
            let kills: [(app: Int?, widget: Int?)] = [(nil, nil), (20, nil), (nil, 30), (45, 10), (nil, nil)]
            for (round, kill) in kills.enumerated() {
                let range = round * 60..<(round + 1) * 60
                async let app = saveLoop(directory, "app", range, killAfter: kill.app)
                async let widget = saveLoop(directory, "widget", range, killAfter: kill.widget)
                let (saved, widgetSaved) = try await (app, widget)
                acknowledged["app", default: []] += saved
                acknowledged["widget", default: []] += widgetSaved
            }
            let unreachable = SyncRemote(
                label: "unreachable",
                push: { _ in throw ValueStoreError(.unavailable, store: "unreachable") },
                pull: { _ in throw ValueStoreError(.unavailable, store: "unreachable") })
            let replica = try SyncReplica(
                directory: directory, account: SyncAccount(id: "shared"), remote: unreachable,
                options: SyncSandbox.options())
            _ = try await replica.id  // the folder opens
            var missing: [String] = []
            for (name, indices) in acknowledged {
                for index in indices {
                    let key = "\(name)-\(index)"
                    let value = try? await replica.store(key, as: String.self).load()
                    if value != key { missing.append(key) }
                }
            }
            #expect(missing.isEmpty, "acknowledged saves lost: \(missing.prefix(20))")
            let total = acknowledged.values.map(\.count).reduce(0, +)
            #expect(total >= 465)  // 600, less the 135 saves the kills come before
            #expect(replica.status.pendingChanges == replica.records.count)
        }
    }
}
