import Foundation
import ValueStore

extension SyncPushRequest {
    /// Pushes this request through `push` without the changes `refusal` gives a reason for,
    /// which are answered ``SyncPushResponse/Outcome/rejected(_:)`` here, with their names, in
    /// the request's order. So a change no server can take (a key a database cannot keep, a
    /// value over a limit) never fails the push of the others, again at every retry.
    ///
    /// A refusal of the whole request (``SyncPushResponse/refusal``) is answered as `push` gave
    /// it, with no outcomes: the replica settles the refusal first and pushes again, and the
    /// refused changes are rejected then.
    ///
    /// ```swift
    /// let unstorable = { (change: SyncRecord) in SyncKey.unstorable(change.key) }
    /// let answer = try await request.pushed(refusing: unstorable, store: label) { try await send($0) }
    /// ```
    ///
    /// - Parameters:
    ///   - refusal: Why a change is not sent on, or `nil` to send it.
    ///   - store: What errors call the server.
    ///   - push: Pushes the changes that are sent on.
    /// - Returns: An outcome for every change of the request.
    /// - Throws: What `push` throws; ``/ValueStore/ValueStoreError/Code/outcomeUnknown`` when its
    ///   answer has not an outcome for each change sent on.
    package func pushed(
        refusing refusal: (SyncRecord) -> String?,
        store: String,
        through push: (SyncPushRequest) async throws -> SyncPushResponse
    ) async throws -> SyncPushResponse {
        let refusals = changes.map(refusal)
        guard refusals.contains(where: { $0 != nil }) else {
            return try await push(self)
        }
        var forwarded = self
        forwarded.changes = zip(changes, refusals).filter { $0.1 == nil }.map(\.0)
        let answer = try await push(forwarded)
        guard answer.refusal == nil else { return answer }
        guard answer.answersEach(of: forwarded.changes.count) else {
            throw ValueStoreError(
                .outcomeUnknown, store: store,
                reason: "the server answered \(answer.outcomes.count) outcomes for \(forwarded.changes.count) changes")
        }
        var merged = answer
        merged.outcomes = []
        merged.settled = []
        var next = 0
        for (change, refusal) in zip(changes, refusals) {
            if let refusal {
                merged.outcomes.append(.rejected(refusal))
                merged.settled?.append(SyncChangeName(naming: change))
            } else {
                merged.outcomes.append(answer.outcomes[next])
                merged.settled?.append(answer.settled?[next] ?? SyncChangeName(naming: change))
                next += 1
            }
        }
        return merged
    }
}
