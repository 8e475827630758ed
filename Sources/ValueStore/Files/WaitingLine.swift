/// A key's line of waiters, as ``TurnLocks`` and ``CommitQueue`` keep one per key: a key with a
/// turn in flight has an entry, an idle key none.
///
/// ```swift
/// let next = entries.withLock { $0.takeNextInLine(for: key) }
/// next?.continuation.resume()
/// ```
protocol WaitingLine {
    associatedtype Waiter
    /// Who waits for a turn after the one in flight, first come first.
    var waiting: [Waiter] { get set }
}

extension Dictionary where Value: WaitingLine {
    /// Ends the turn in flight for `key`: takes the first waiter out of its line, or, when
    /// nobody waits, removes the key, which goes idle.
    mutating func takeNextInLine(for key: Key) -> Value.Waiter? {
        guard var line = self[key], !line.waiting.isEmpty else {
            self[key] = nil
            return nil
        }
        let next = line.waiting.removeFirst()
        self[key] = line
        return next
    }
}
