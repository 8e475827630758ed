#if PostgreSQL
/// The last notifications of one key a listener heard, numbered, for followers that need more
/// than the signal (a sync table's pokes name the pushing replica): a follower reads what came
/// after the last number it read. Only the sync tables' notifications are kept, and the last
/// ``capacity`` of them; a follower that fell further behind, or a signal with nothing new (the
/// listener listening again, its health changing), reads "missed", which means "pull now".
struct PostgresNoticeLog {
    /// How many notifications are kept.
    static let capacity = 16

    private var entries: [(number: UInt64, notice: PostgresChangeNotice?)] = []
    /// The number of the last entry, or 0 before the first.
    private(set) var last: UInt64 = 0

    /// Keeps `notice`, or, with `nil`, a mark that notifications may have been missed.
    mutating func append(_ notice: PostgresChangeNotice?) {
        last += 1
        entries.append((last, notice))
        if entries.count > Self.capacity {
            entries.removeFirst(entries.count - Self.capacity)
        }
    }

    /// Whether any notification after number `read` may have been missed (a mark, or entries
    /// no longer kept), and the notifications after the last such loss: what a follower that
    /// pulls for the loss still learns from. A follower that read each entry as it came gets the
    /// same: a "pull now", then the notifications that followed it.
    func notices(after read: UInt64) -> (notices: [PostgresChangeNotice], missed: Bool) {
        let newer = entries.filter { $0.number > read }
        let kept = newer.first.map { $0.number == read + 1 } ?? (read == last)
        let lastMark = newer.lastIndex { $0.notice == nil }
        let known = newer[(lastMark.map { $0 + 1 } ?? 0)...]
        return (known.compactMap(\.notice), !kept || lastMark != nil)
    }
}
#endif
