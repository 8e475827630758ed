import ValueStore

// A replica checks every answer against its request before it applies any of it: a cache or a
// retrying proxy can hand back an earlier answer, or another account's, and taking one would take
// a change out of the outbox that the server never stored.
extension SyncReplica {
    /// The outcomes of a push's `response`, each with the change of `request` it settles: by
    /// the names the answer gives (``SyncPushResponse/settled``), or, in an answer from a server
    /// that predates them, by position.
    ///
    /// - Throws: ``/ValueStore/ValueStoreError/Code/outcomeUnknown`` when the names do not match
    ///   the changes sent one for one (a stale or misrouted answer: nothing of it is applied,
    ///   and the changes stay pending); ``/ValueStore/ValueStoreError/Code/corrupted`` when an
    ///   answer without names has another count of outcomes than of changes.
    static func pair(
        _ response: SyncPushResponse,
        with request: SyncPushRequest,
        from remote: String
    ) throws -> [(change: SyncRecord, outcome: SyncPushResponse.Outcome)] {
        guard let settled = response.settled else {
            guard response.outcomes.count == request.changes.count else {
                throw ValueStoreError(
                    .corrupted, store: remote,
                    reason:
                        "the server answered \(response.outcomes.count) outcomes to \(request.changes.count) changes")
            }
            return Array(zip(request.changes, response.outcomes))
        }
        var sent: [SyncChangeName: SyncRecord] = [:]
        for change in request.changes {
            sent[SyncChangeName(naming: change)] = change
        }
        var paired: [(change: SyncRecord, outcome: SyncPushResponse.Outcome)] = []
        if settled.count == response.outcomes.count {
            for (name, outcome) in zip(settled, response.outcomes) {
                // Names compare as Swift strings: a server puts keys in their canonical
                // composition (``SyncKey``), and a change sent under another spelling of its key
                // (kept from before the rule) is named in that one.
                guard let change = sent.removeValue(forKey: name) else { break }
                paired.append((change, outcome))
            }
        }
        guard paired.count == request.changes.count else {
            throw ValueStoreError(
                .outcomeUnknown, store: remote,
                reason: "the push's answer does not name the \(request.changes.count) changes sent, one outcome each"
                    + " (a stale or misrouted answer); they stay pending")
        }
        return paired
    }

    /// Checks that a pulled page answers `request`: it is of the request's account, when it says.
    ///
    /// - Throws: ``/ValueStore/ValueStoreError/Code/outcomeUnknown`` for a page of another account
    ///   (a misrouted answer: nothing of it is applied).
    static func check(_ page: SyncPullResponse, answers request: SyncPullRequest, from remote: String) throws {
        guard let account = page.account, !account.utf8.elementsEqual(request.account.utf8) else { return }
        throw ValueStoreError(
            .outcomeUnknown, store: remote,
            reason: "a pull's answer is of another account than the one asked for (a misrouted answer)")
    }
}
