import Synchronization

/// A value shared by concurrent closures.
final class Shared<Value: Sendable>: Sendable {
    fileprivate let mutex: Mutex<Value>

    init(_ value: Value) {
        mutex = Mutex(value)
    }

    var value: Value {
        get { mutex.withLock { $0 } }
        set { mutex.withLock { $0 = newValue } }
    }
}

extension Shared {
    /// Appends to a shared array under the lock.
    func append<Element>(_ element: Element) where Value == [Element] {
        mutex.withLock { $0.append(element) }
    }

    /// Runs `body` with exclusive access to the value.
    func withLock<Result: Sendable>(_ body: (inout Value) -> Result) -> Result {
        mutex.withLock { body(&$0) }
    }
}
