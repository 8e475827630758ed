#if PostgreSQL
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// The forwarder's threads: one accepts connections (and closes the port while refusing), and
/// one per connection forwards it both ways, in whatever ``TCPForwarder/Mode`` says.
extension TCPForwarder {
    static let tick: Int32 = 10  // milliseconds between looks at the mode

    /// Accepts until stopped; closes the port while refusing and opens it again after.
    func acceptLoop(_ initial: Int32) {
        var listener: Int32? = initial
        while true {
            let (mode, stopped) = state.withLock { ($0.mode, $0.stopped) }
            if stopped {
                if let listener { close(listener) }
                return
            }
            if mode == .refuse {
                if let open = listener {
                    close(open)
                    listener = nil
                }
                state.withLock { $0.listening = false }
                usleep(UInt32(Self.tick) * 1000)
                continue
            }
            guard let open = listener else {
                // The same port again: SO_REUSEADDR lets it bind while old connections linger.
                listener = try? Self.listeningSocket(port: port).0
                if listener == nil {
                    usleep(UInt32(Self.tick) * 1000)
                } else {
                    state.withLock { $0.listening = true }
                }
                continue
            }
            var poller = pollfd(fd: open, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Self.tick) > 0 else { continue }
            let client = accept(open, nil, nil)
            guard client >= 0 else { continue }
            let (now, start) = state.withLock { state in
                state.accepted += 1
                return (state.mode, Generations(resets: state.resets, blackholes: state.blackholes))
            }
            if now == .refuse || now == .reset {
                Self.closeWithReset(client)
                continue
            }
            state.withLock { $0.open += 1 }
            Thread.detachNewThread { [self] in
                forward(client, start: start)
                state.withLock { $0.open -= 1 }
            }
        }
    }

    /// The reset and blackhole counts a connection started under.
    struct Generations: Equatable {
        var resets: Int
        var blackholes: Int
    }

    /// Forwards one connection until either side closes it or it is reset.
    private func forward(_ client: Int32, start: Generations) {
        guard let server = connectUpstream() else {
            Self.closeWithReset(client)
            return
        }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        // Read only for PostgreSQL: any other protocol's bytes would never make a whole message.
        var fromServer = ServerMessages()
        while true {
            let (mode, resets, blackholes) = state.withLock { ($0.mode, $0.resets, $0.blackholes) }
            if resets != start.resets {
                Self.closeWithReset(client)
                Self.closeWithReset(server)
                return
            }
            if mode == .blackhole || blackholes != start.blackholes {
                usleep(UInt32(Self.tick) * 1000)
                continue
            }
            var pollers = [
                pollfd(fd: client, events: Int16(POLLIN), revents: 0),
                pollfd(fd: server, events: Int16(POLLIN), revents: 0),
            ]
            guard poll(&pollers, 2, Self.tick) > 0 else { continue }
            // Look again: a blackhole or a reset that came while waiting wins over the data.
            let after = state.withLock { ($0.mode, Generations(resets: $0.resets, blackholes: $0.blackholes)) }
            if after.0 == .blackhole || after.1 != start { continue }
            for (index, poller) in pollers.enumerated() where poller.revents != 0 {
                let (from, to) = index == 0 ? (client, server) : (server, client)
                let count = read(from, &buffer, buffer.count)
                guard count > 0 else {
                    close(client)
                    close(server)
                    return
                }
                var bytes = Array(buffer[..<count])
                if from == server && after.0 == .dropAnswers {
                    state.withLock { $0.droppedAnswers += 1 }
                    Self.closeWithReset(client)
                    close(server)
                    return
                }
                if from == server && traffic == .postgres {
                    let answer = fromServer.pass(
                        bytes, droppingNotifications: dropsNotifications,
                        droppingCommittedAnswers: after.0 == .dropResponses)
                    guard !answer.dropped else {
                        // The server finished the request: the client never hears of it.
                        state.withLock { $0.droppedAnswers += 1 }
                        Self.closeWithReset(client)
                        close(server)
                        return
                    }
                    bytes = answer.bytes
                }
                guard Self.writeAll(to, bytes, bytes.count) else {
                    close(client)
                    close(server)
                    return
                }
            }
        }
    }
}
#endif
