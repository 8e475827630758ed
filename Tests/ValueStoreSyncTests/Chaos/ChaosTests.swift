import Foundation
import Testing
import ValueStoreSync

/// Seeded random schedules against the in-memory server, each followed by a check of every
/// invariant (see ``ChaosSchedule`` and ``ChaosChecker``). `VALUESTORE_SYNC_SCHEDULES` sets how
/// many run (2,000 by default), `VALUESTORE_SYNC_SEED` the first seed; a failure prints its seed
/// and schedule, and `VALUESTORE_SYNC_SCHEDULES=1 VALUESTORE_SYNC_SEED=<seed>` runs it again.
@Suite(.timeLimit(.minutes(10))) struct ChaosTests {
    static let environment = ProcessInfo.processInfo.environment
    static let count = environment["VALUESTORE_SYNC_SCHEDULES"].flatMap(Int.init) ?? 2_000
    static let firstSeed = environment["VALUESTORE_SYNC_SEED"].flatMap(UInt64.init) ?? 1

    /// Seeds that once broke an invariant, each run on every test run: 11005200 (a `restored`
    /// refusal turned the clock back, and a save reused a pending save's stamp), 2005993 and
    /// 10006486 (a new epoch over a restored server dropped a removal the server had
    /// acknowledged, unarchived).
    @Test(arguments: [11_005_200, 2_005_993, 10_006_486] as [UInt64])
    func knownSeedKeepsEveryInvariant(seed: UInt64) async throws {
        let root = try Self.makeRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        let schedule = ChaosSchedule(seed: seed, root: root)
        let problems = try await schedule.run()
        let report = (problems + ["schedule:"] + schedule.log).joined(separator: "\n  ")
        #expect(problems.isEmpty, "seed \(seed):\n  \(report)")
    }

    /// A folder for schedules: in memory where the system has a tmpfs, since thousands of
    /// schedules commit small files many times, and a disk's journal would be most of their
    /// time. No schedule needs durability across a power loss: its crashes drop objects, not
    /// the machine.
    static func makeRoot() throws -> URL {
        let memory = URL(filePath: "/dev/shm", directoryHint: .isDirectory)
        let base =
            FileManager.default.isWritableFile(atPath: memory.path(percentEncoded: false))
            ? memory : FileManager.default.temporaryDirectory
        let root = base.appending(path: "ValueStoreSyncChaos-\(UUID().uuidString)", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        return root
    }

    @Test func seededSchedulesKeepEveryInvariant() async throws {
        let root = try Self.makeRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        let start = ContinuousClock.now
        let failures = try await withThrowingTaskGroup(of: String?.self) { group in
            var next = 0
            var failures: [String] = []
            func add() {
                let seed = Self.firstSeed + UInt64(next)
                next += 1
                group.addTask {
                    let folder = root.appending(path: "\(seed)", directoryHint: .isDirectory)
                    defer { try? FileManager.default.removeItem(at: folder) }
                    let schedule = ChaosSchedule(seed: seed, root: folder)
                    let problems = try await schedule.run()
                    guard !problems.isEmpty else { return nil }
                    return "seed \(seed):\n  " + (problems + ["schedule:"] + schedule.log).joined(separator: "\n  ")
                }
            }
            for _ in 0..<min(4, Self.count) { add() }
            while let result = try await group.next() {
                if let result { failures.append(result) }
                if next < Self.count { add() }
            }
            return failures
        }
        print("chaos: \(Self.count) schedules from seed \(Self.firstSeed) in \(ContinuousClock.now - start)")
        for failure in failures.prefix(5) {
            print(failure)
        }
        #expect(
            failures.isEmpty,
            "\(failures.count) of \(Self.count) schedules broke an invariant; the first: \(failures.first ?? "")")
    }
}
