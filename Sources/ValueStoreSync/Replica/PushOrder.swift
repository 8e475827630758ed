/// The order in which a push takes a replica's pending changes: by key, a batch at a time. The
/// pending keys are sorted once a round, and the next round takes those still pending then
/// (merged, stamped again, or changed meanwhile); sorting every record for every batch would
/// make a push of n keys cost n².
struct PushOrder {
    private var keys: [String] = []
    private var next = 0

    /// The next `size` pending changes at most, none of the keys in `waiting` (`.merge` changes
    /// whose store is not made); empty when none is left.
    mutating func batch(of size: Int, from state: ReplicaState, skipping waiting: Set<String>) -> [SyncRecord] {
        var changes: [SyncRecord] = []
        var batched: Set<String> = []
        var refilled = false
        while changes.count < size {
            if next == keys.count {
                guard !refilled else { break }
                keys = state.pendingSince.keys.filter { !waiting.contains($0) }.sorted()
                (next, refilled) = (0, true)
                continue
            }
            let key = keys[next]
            next += 1
            guard let record = state.records[key], record.isPending, !waiting.contains(key),
                batched.insert(key).inserted
            else { continue }
            changes.append(record.record(key: key))
        }
        return changes
    }
}
