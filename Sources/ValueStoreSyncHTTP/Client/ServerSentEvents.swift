import Foundation

/// Reads server-sent events from a stream's chunks as they come: the name of each event (its
/// `event:` field, `message` without one), dispatched at the blank line that ends it. Data and
/// comments are ignored: sync's pokes carry none.
struct ServerSentEvents {
    private var pending = Data()
    private var name: String?

    /// The events that `chunk` completes, in order.
    mutating func feed(_ chunk: Data) -> [String] {
        pending.append(chunk)
        var events: [String] = []
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            var line = pending[pending.startIndex..<newline]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            pending = Data(pending[pending.index(after: newline)...])
            if line.isEmpty {
                if let name { events.append(name) }
                name = nil
                continue
            }
            let text = String(decoding: line, as: UTF8.self)
            if text.hasPrefix(":") { continue }  // a comment
            let field = text.prefix { $0 != ":" }
            var value = text.dropFirst(field.count).dropFirst()
            if value.hasPrefix(" ") { value = value.dropFirst() }
            if field == "event" {
                name = String(value)
            } else if name == nil {
                name = "message"
            }
        }
        return events
    }
}
