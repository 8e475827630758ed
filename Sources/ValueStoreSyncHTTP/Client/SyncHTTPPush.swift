import Foundation
import ValueStore
import ValueStoreSync

/// A push over HTTP that fits the request limits: a push whose JSON is over
/// ``SyncHTTPOptions/maximumRequestBytes``, or that the server or a proxy refuses as too large
/// (413), goes as two halves, each split again as needed, and their answers are merged in the
/// request's order. A change too large to go alone is settled as
/// ``ValueStoreSync/SyncPushResponse/Outcome/rejected(_:)`` without being sent.
struct SyncHTTPPush {
    let client: SyncHTTPClient
    let request: SyncPushRequest

    /// The outcomes so far, each with the change it settles, and the last server answer.
    private struct Merged {
        var outcomes: [SyncPushResponse.Outcome] = []
        var settled: [SyncChangeName] = []
        var answer: SyncPushResponse?
        /// How many requests the server answered, and how many changes were settled here.
        var answers = 0
        var rejectedHere = 0
    }

    /// Sends the push; the server's own answer when it went as one request, else the merged one.
    func send() async throws -> SyncPushResponse {
        var merged = Merged()
        if let refused = try await send(request.changes[...], into: &merged) {
            return refused
        }
        if merged.answer == nil {
            // Every change was settled here: an empty push brings the server's epoch and time, or
            // its refusal, which an answer must carry.
            if let refused = try await send([], into: &merged) {
                return refused
            }
        }
        guard let answer = merged.answer else {
            throw ValueStoreError(.outcomeUnknown, store: client.label, reason: "the server sent no answer to a push")
        }
        if merged.answers == 1 && merged.rejectedHere == 0 {
            return answer  // sent as one request: its answer as it is
        }
        return SyncPushResponse(
            epoch: answer.epoch, serverTime: answer.serverTime, refusal: nil, outcomes: merged.outcomes,
            settled: merged.settled)
    }

    /// Sends `changes` as one request, or as halves when they do not fit; returns the answer of
    /// a part the server refused as a whole.
    private func send(_ changes: ArraySlice<SyncRecord>, into merged: inout Merged) async throws -> SyncPushResponse? {
        var part = request
        part.changes = Array(changes)
        let body = try WireJSON.encode(part)
        let limit = client.options.maximumRequestBytes
        guard body.count <= limit else {
            guard changes.count > 1 else {
                reject(
                    changes, "the change is \(body.count) bytes as a push, over the client's limit of \(limit) bytes",
                    into: &merged)
                return nil
            }
            return try await sendHalves(of: changes, into: &merged)
        }
        let data: Data
        do {
            data = try await client.post(body, to: "v1/push", effect: .mayApply, splits: true)
        } catch let tooLarge as SyncHTTPClient.TooLarge {
            guard changes.count > 1 else {
                reject(
                    changes,
                    "the server refused a push of this change alone, \(body.count) bytes, as too large (413)"
                        + (tooLarge.error.reason.map { ": \($0)" } ?? ""),
                    into: &merged)
                return nil
            }
            return try await sendHalves(of: changes, into: &merged)
        }
        let answer: SyncPushResponse
        do {
            answer = try WireJSON.decode(SyncPushResponse.self, from: data)
        } catch {
            throw ValueStoreError(
                .outcomeUnknown, store: client.label,
                reason: "the server's answer to a push is not a push response; it is safe to push again")
        }
        if answer.refusal != nil {
            return answer
        }
        // Each part's outcomes are counted against its own changes: two parts whose counts were
        // off by as much either way would otherwise pair outcomes with the wrong changes.
        guard answer.answersEach(of: changes.count) else {
            throw ValueStoreError(
                .outcomeUnknown, store: client.label,
                reason: "the server answered \(answer.outcomes.count) outcomes for a push of \(changes.count) changes; "
                    + "it is safe to push again")
        }
        merged.answer = answer
        merged.answers += 1
        merged.outcomes += answer.outcomes
        // An answer without names (an older server) is matched to its part by position.
        merged.settled += answer.settled ?? part.changes.map(SyncChangeName.init(naming:))
        return nil
    }

    private func sendHalves(
        of changes: ArraySlice<SyncRecord>,
        into merged: inout Merged
    ) async throws -> SyncPushResponse? {
        let middle = changes.startIndex + changes.count / 2
        if let refused = try await send(changes[..<middle], into: &merged) {
            return refused
        }
        return try await send(changes[middle...], into: &merged)
    }

    /// Settles `changes` (one) as rejected for `reason`, in the request's order.
    private func reject(_ changes: ArraySlice<SyncRecord>, _ reason: String, into merged: inout Merged) {
        for change in changes {
            merged.rejectedHere += 1
            merged.outcomes.append(.rejected(reason))
            merged.settled.append(SyncChangeName(naming: change))
        }
    }
}
