import Synchronization

/// Counts calls made from concurrent closures.
final class Calls: Sendable {
    private let count = Mutex(0)

    var value: Int { count.withLock { $0 } }

    func increment() {
        count.withLock { $0 += 1 }
    }
}
