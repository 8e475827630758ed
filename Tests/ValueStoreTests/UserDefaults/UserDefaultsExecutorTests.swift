import Foundation
import Synchronization
import Testing

@testable import ValueStore

/// A `userDefaults` save or removal writes on the I/O threads: on Linux, Foundation writes the
/// suite's property-list file in `synchronize()`, a blocking write.
@Suite struct UserDefaultsExecutorTests {
    /// A value that notes where UserDefaults asked for its object: where the write ran.
    struct Probe: PropertyListValue {
        static let threads = Mutex<[Bool]>([])

        init() {}

        init?(propertyListObject object: Any) {
            guard object as? String == "probe" else { return nil }
        }

        var propertyListObject: Any {
            let onAnIOThread = BlockingIO.isCurrentThread
            Self.threads.withLock { $0.append(onAnIOThread) }
            return "probe"
        }
    }

    @Test func savesAndRemovalsWriteOnTheIOThreads() async throws {
        try await TemporarySuite.with { suite in
            let store = ValueStore<Void, Probe>.userDefaults("probe", suiteName: suite.name)
            try await store.save(Probe())
            _ = try await store.update { $0 = Probe() }
            try await store.remove()
            let threads = Probe.threads.withLock { $0 }
            #expect(threads.count >= 2, "the writes asked for the value's object")
            #expect(threads.allSatisfy { $0 }, "every write ran on an I/O thread")
        }
    }
}
