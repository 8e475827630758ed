#if PostgreSQL
/// The server's side of one connection, cut into messages (a type byte, then a 32-bit length
/// that counts itself), so that notifications, or a whole answer, can be dropped. Without TLS,
/// every message the server sends has this shape, from the first.
struct ServerMessages {
    private var pending: [UInt8] = []
    /// The answer so far to the request in progress, held back while answers to commits are
    /// dropped: it goes on, or is dropped, at its `ReadyForQuery`.
    private var answer: [UInt8] = []
    /// Whether the connection's start-up is over (its first `ReadyForQuery` went by).
    private var isStarted = false

    /// The bytes to send on: whole messages, less notifications when `droppingNotifications`; a
    /// partial message waits for the rest. When `droppingCommittedAnswers`, each answer is held
    /// until its `ReadyForQuery` (`Z`), whose status byte says where the session stands: in a
    /// transaction (`T`, `E`) the answer goes on; outside one (`I`) the request committed (or
    /// ran on its own), and `dropped` is true: the caller resets the connection. The start-up's
    /// messages always pass.
    mutating func pass(
        _ bytes: [UInt8],
        droppingNotifications: Bool,
        droppingCommittedAnswers: Bool
    ) -> (bytes: [UInt8], dropped: Bool) {
        pending += bytes
        var out: [UInt8] = []
        if !droppingCommittedAnswers {
            out = answer
            answer = []
        }
        var start = 0
        while pending.count - start >= 5 {
            let length = pending[start + 1..<start + 5].reduce(0) { $0 << 8 | Int($1) }
            let end = start + 1 + length
            guard end <= pending.count else { break }
            let type = pending[start]
            let message = pending[start..<end]
            start = end
            if type == UInt8(ascii: "A") {
                // A notification is no answer: it passes, unless notifications are dropped.
                if !droppingNotifications { out += message }
            } else if !droppingCommittedAnswers || !isStarted {
                out += message
                isStarted = isStarted || type == UInt8(ascii: "Z")
            } else if type == UInt8(ascii: "Z") && length == 5 && message.last == UInt8(ascii: "I") {
                return (out, true)
            } else {
                answer += message
                if type == UInt8(ascii: "Z") {
                    out += answer
                    answer = []
                }
            }
        }
        pending.removeFirst(start)
        return (out, false)
    }
}
#endif
