import Foundation

/// The in-memory server's index of an account's records by version, so that a pull page costs
/// the records it returns, not a sort of every record: without it, pulling `n` keys in pages
/// cost `n²` (100,000 keys: minutes).
///
/// Every write takes the account's next head, so the index is a list kept in version order by
/// appending each push's writes. A record written again leaves its older entry behind, stale: a
/// page skips an entry whose key's record has another version now (or none, once a removal is
/// collected), and the list is rebuilt from the records when stale entries outnumber live ones,
/// or when it does not cover the account's head (a restore from a backup drops it anyway).
///
/// ```swift
/// var index = SyncVersionIndex(of: state)
/// let page = index.records(after: cursor, limit: 500, in: state)
/// ```
struct SyncVersionIndex {
    /// Each write's version and key, in version order.
    private var entries: [(version: ServerVersion, key: String)] = []
    /// The account's head the entries cover.
    private(set) var head = ServerVersion.zero
    /// How many times the list was built from every record: for tests, which check that pulls
    /// and pushes do not rebuild it.
    private(set) var rebuilds = 0

    /// An index of every record `state` holds.
    init(of state: SyncAccountState) {
        rebuild(from: state)
    }

    /// Takes in the records a push wrote: those of `keys` whose version is after `previousHead`.
    mutating func add(_ keys: some Sequence<String>, after previousHead: ServerVersion, in state: SyncAccountState) {
        guard head == previousHead else {
            rebuild(from: state)
            return
        }
        var written: [(version: ServerVersion, key: String)] = []
        for key in Set(keys) {
            if let version = state.records[key]?.version, version > previousHead {
                written.append((version, key))
            }
        }
        written.sort { $0.version < $1.version }
        entries += written
        head = state.row.head
        // Each record has one live entry; the others are stale.
        if entries.count - state.records.count > max(1_024, state.records.count) {
            rebuild(from: state)
        }
    }

    /// `state` with only its first `limit` records after `cursor`: what a pull's answer needs
    /// (see ``SyncServerRules/answer(_:in:serverTime:)``).
    mutating func page(after cursor: ServerVersion, limit: Int, of state: SyncAccountState) -> SyncAccountState {
        if head != state.row.head {
            rebuild(from: state)
        }
        var start = entries.partitioningIndex { $0.version > cursor }
        var records: [String: SyncServerRecord] = [:]
        while start < entries.count, records.count < max(1, limit) {
            let (version, key) = entries[start]
            if let record = state.records[key], record.version == version {
                records[key] = record
            }
            start += 1
        }
        var page = state
        page.records = records
        return page
    }

    private mutating func rebuild(from state: SyncAccountState) {
        entries = state.records.map { ($0.value.version, $0.key) }.sorted { $0.version < $1.version }
        head = state.row.head
        rebuilds += 1
    }
}

extension Array {
    /// The index of the first element for which `isAfter` holds, in an array where it holds for
    /// a suffix: a binary search.
    fileprivate func partitioningIndex(where isAfter: (Element) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if isAfter(self[middle]) {
                high = middle
            } else {
                low = middle + 1
            }
        }
        return low
    }
}
