import Foundation
import Synchronization
import ValueStore
import ValueStoreSync

/// A remote around another that counts its calls and does to each what the test says: pass it,
/// drop it before it reaches the server, drop its answer after the server applied it, send it
/// twice, or hold it in flight until released.
final class FaultyRemote: Sendable {
    enum Fault: Sendable, Equatable {
        case pass
        /// Never reaches the server; the call throws.
        case dropRequest
        /// Reaches the server, which applies it; the answer is lost and the call throws.
        case dropAnswer
        /// Reaches the server twice; the second answer comes back.
        case duplicate
        /// Reaches the server, then waits until ``release()``, and throws.
        case hold
    }

    enum Call: Sendable, Equatable {
        case push
        case pull
    }

    private struct State {
        var pushes = 0
        var pulls = 0
        var decide: @Sendable (_ call: Call) -> Fault = { _ in .pass }
        var held: [CheckedContinuation<Void, Never>] = []
        var holding: [CheckedContinuation<Void, Never>] = []
        var isFinished = false
        var log: [String] = []
    }

    private let inner: SyncRemote
    private let state = Mutex(State())

    init(_ inner: SyncRemote) {
        self.inner = inner
    }

    /// The remote to give a replica.
    var remote: SyncRemote {
        SyncRemote(
            label: "faulty \(inner.label)",
            push: { request in
                try await self.call(.push) {
                    let response = try await self.inner.push(request)
                    self.note(response)
                    return response
                }
            },
            pull: { request in try await self.call(.pull) { try await self.inner.pull(request) } },
            pokes: { self.inner.pokes() })
    }

    /// Adds what a push's answer said to the log.
    private func note(_ response: SyncPushResponse) {
        let said = response.refusal.map { "refused \($0)" } ?? response.outcomes.map(Self.name).joined(separator: " ")
        state.withLock { $0.log.append("→ \(said)") }
    }

    private static func name(_ outcome: SyncPushResponse.Outcome) -> String {
        switch outcome {
        case .accepted: "accepted"
        case .overtaken: "overtaken"
        case .lost: "lost"
        case .mergeNeeded: "mergeNeeded"
        case .superseded: "superseded"
        case .tooFarAhead: "tooFarAhead"
        case .rejected: "rejected"
        }
    }

    /// Decides the fault of every call from now on.
    func faults(_ decide: @escaping @Sendable (_ call: Call) -> Fault) {
        state.withLock { $0.decide = decide }
    }

    /// The same fault for every call.
    func always(_ fault: Fault) {
        faults { _ in fault }
    }

    var pushes: Int { state.withLock { $0.pushes } }
    var pulls: Int { state.withLock { $0.pulls } }
    var requests: Int { state.withLock { $0.pushes + $0.pulls } }
    var log: [String] { state.withLock { $0.log } }

    /// Waits until a call is held in flight, or ``finished()`` says none will be.
    func waitUntilHolding() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if !state.held.isEmpty || state.isFinished { return true }
                state.holding.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Says that the work that might have made a held call is over.
    func finished() {
        let waiting = state.withLock { state in
            state.isFinished = true
            defer { state.holding = [] }
            return state.holding
        }
        for waiter in waiting { waiter.resume() }
    }

    /// Lets every held call end, each with an error.
    func release() {
        let held = state.withLock { state in
            defer { state.held = [] }
            return state.held
        }
        for continuation in held {
            continuation.resume()
        }
    }

    private func call<Answer: Sendable>(
        _ kind: Call,
        _ send: @Sendable () async throws -> Answer
    ) async throws -> Answer {
        let fault = state.withLock { state in
            if kind == .push { state.pushes += 1 } else { state.pulls += 1 }
            let fault = state.decide(kind)
            state.log.append("\(kind) \(fault)")
            return fault
        }
        switch fault {
        case .pass:
            return try await send()
        case .dropRequest:
            throw ValueStoreError(.unavailable, store: "faulty remote", reason: "the request was dropped")
        case .dropAnswer:
            _ = try await send()
            throw ValueStoreError(.outcomeUnknown, store: "faulty remote", reason: "the answer was dropped")
        case .duplicate:
            _ = try await send()
            return try await send()
        case .hold:
            _ = try await send()
            await withCheckedContinuation { continuation in
                let waiting = state.withLock { state in
                    state.held.append(continuation)
                    defer { state.holding = [] }
                    return state.holding
                }
                for waiter in waiting { waiter.resume() }
            }
            throw ValueStoreError(.outcomeUnknown, store: "faulty remote", reason: "the call was held and let go")
        }
    }
}
