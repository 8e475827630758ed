import Foundation
import ValueStore
import ValueStoreSync

extension SyncHTTPService {
    /// Answers a push of `account`: a change whose value is over
    /// ``SyncHTTPLimits/maximumValueBytes`` is rejected here, with its key and stamp, and the
    /// others go to the account's remote; the answer has an outcome for every change, in the
    /// request's order.
    ///
    /// A refusal of the whole request (``SyncPushResponse/refusal``) is answered as the remote
    /// gave it, with no outcomes: the replica settles the refusal first and pushes again, and the
    /// oversized changes are rejected then.
    func push(_ request: SyncPushRequest, of account: SyncAccount) async throws -> SyncPushResponse {
        let oversized = request.changes.map { ($0.value?.count ?? 0) > limits.maximumValueBytes }
        guard oversized.contains(true) else {
            return try await remote(account).push(request)
        }
        var forwarded = request
        forwarded.changes = zip(request.changes, oversized).filter { !$0.1 }.map(\.0)
        let answer = try await remote(account).push(forwarded)
        guard answer.refusal == nil else { return answer }
        guard answer.outcomes.count == forwarded.changes.count,
            (answer.settled?.count ?? forwarded.changes.count) == forwarded.changes.count
        else {
            throw ValueStoreError(
                .outcomeUnknown, store: "sync over HTTP",
                reason: "the server answered \(answer.outcomes.count) outcomes for \(forwarded.changes.count) changes")
        }
        var merged = answer
        merged.outcomes = []
        merged.settled = []
        var next = 0
        for (change, isOversized) in zip(request.changes, oversized) {
            if isOversized {
                let size = change.value?.count ?? 0
                merged.outcomes.append(
                    .rejected("the value is \(size) bytes, over the server's limit of \(limits.maximumValueBytes)"))
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
