#if PostgreSQL
import Synchronization
import ValueStore

// The polled keys of a listener: a sync table's pokes must keep a replica pulling while no
// notification can be trusted (the listener cannot listen, or lost its connection), so the
// listener signals them every heartbeat then, marked as missed in their logs ("pull now"). One
// task a listener does it, however many keys are polled, instead of one for each.
extension PostgresListener {
    /// Counts one more polled stream of `key`, whose entry exists, and starts the polling task
    /// if none runs. Called under the lock of ``observed``.
    func addPolled(_ key: String, in observed: inout [String: Observed]) {
        observed[key]!.polled += 1
        polling.withLock { polling in
            guard polling == nil else { return }
            polling = Task { [weak self] in await self?.poll() }
        }
    }

    /// Every ``heartbeat``, while any key is polled: when the feed does not follow, marks each
    /// polled key's log and signals its streams. Ends when no key is polled.
    private func poll() async {
        while (try? await Task.sleep(for: heartbeat)) != nil {
            let following: Bool = if case .following = feed.health { true } else { false }
            let broadcasters = observed.withLock { observed -> [ChangeBroadcaster]? in
                let polled = observed.keys.filter { observed[$0]!.polled > 0 }
                guard !polled.isEmpty else {
                    polling.withLock { $0 = nil }
                    return nil
                }
                guard !following else { return [] }
                for key in polled {
                    observed[key]!.notices.append(nil)
                }
                return polled.map { observed[$0]!.broadcaster }
            }
            guard let broadcasters else { return }
            for broadcaster in broadcasters {
                broadcaster.signalAll()
            }
        }
    }
}
#endif
