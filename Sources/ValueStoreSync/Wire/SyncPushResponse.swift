public import Foundation

/// The server's answer to a ``SyncPushRequest``: one outcome per change, in order, each named by
/// the change it settles (``settled``), or a refusal of the whole request.
///
/// A replica applies an outcome only to the change it names, and takes any other (an outcome
/// for a change it did not send, a change it sent with no outcome) for a transport fault: the
/// push's outcome is unknown and the change stays pending. An answer from a server that predates
/// ``settled`` has none, and its outcomes are matched to the request's changes by position.
/// As JSON, an answer reads `{"epoch": …, "serverTime": …, "outcomes": [{"accepted": {"_0": 5}}],
/// "settled": [{"key": "theme", "stamp": {…}}]}`.
///
/// ```swift
/// let response = try await remote.push(request)
/// for (change, outcome) in zip(request.changes, response.outcomes) {
///     if case .accepted(let version) = outcome { print("\(change.key) is at \(version)") }
/// }
/// ```
public struct SyncPushResponse: Hashable, Sendable, Codable {
    /// What became of one change.
    ///
    /// ```swift
    /// switch outcome {
    /// case .accepted(let version): print("stored at \(version)")
    /// case .lost(let winner): print("archived; the server keeps \(String(describing: winner))")
    /// default: break
    /// }
    /// ```
    public enum Outcome: Hashable, Sendable, Codable {
        /// The change is the server's record of its key, at this version.
        case accepted(ServerVersion)
        /// The change is settled, and this record holds it: the change was accepted before (this
        /// is a repeat) and a later record replaced it, or the record was made on it. Nothing
        /// was archived.
        case overtaken(SyncRecord)
        /// The change did not apply: it lost to the server's record, given here (`nil`: the key
        /// has none). The server archived it; the replica archives it too, and takes the record.
        case lost(SyncRecord?)
        /// A ``SyncRecord/Policy/merge`` change was not made on the server's record, given here
        /// (`nil`: none): merge with it and push the result. Nothing was archived.
        case mergeNeeded(SyncRecord?)
        /// The change's author already sent a later change to this key, and the key has no
        /// record now (its removal was collected): nothing happened.
        case superseded
        /// The change's stamp is too far in the server's future: stamp it again after
        /// ``SyncPushResponse/serverTime`` and push again. Nothing happened.
        case tooFarAhead
        /// The server will never apply the change, for this reason (a copied replica that reused
        /// a stamp with other content). Nothing happened.
        case rejected(String)
    }

    /// The account's epoch.
    ///
    /// ```swift
    /// let epoch = response.epoch
    /// ```
    public var epoch: UUID
    /// The server's clock, in milliseconds since 1970, when it answered.
    ///
    /// ```swift
    /// let offset = response.serverTime - Int64(Date().timeIntervalSince1970 * 1_000)
    /// ```
    public var serverTime: Int64
    /// Why the whole request was refused; `nil` when its changes were settled.
    ///
    /// ```swift
    /// if response.refusal == .restored { print("the server lost history") }
    /// ```
    public var refusal: SyncRefusal?
    /// One outcome per change, in the request's order; empty when refused.
    ///
    /// ```swift
    /// let applied = response.outcomes.filter { if case .accepted = $0 { true } else { false } }.count
    /// ```
    public var outcomes: [Outcome]
    /// The change each outcome settles, in the order of ``outcomes``; `nil` in an answer from a
    /// server that predates it (decoded from JSON without it), whose outcomes are then matched
    /// to the request's changes by position.
    ///
    /// ```swift
    /// let names = response.settled ?? []
    /// ```
    public var settled: [SyncChangeName]?

    /// A response from its parts.
    ///
    /// ```swift
    /// let response = SyncPushResponse(
    ///     epoch: epoch, serverTime: now, refusal: nil, outcomes: [.accepted(version)],
    ///     settled: [SyncChangeName(naming: change)])
    /// ```
    ///
    /// - Parameters:
    ///   - epoch: The account's epoch.
    ///   - serverTime: The server's clock, in milliseconds since 1970.
    ///   - refusal: Why the whole request was refused, if it was.
    ///   - outcomes: One outcome per change.
    ///   - settled: The change each outcome settles; `nil` for an answer matched by position.
    public init(
        epoch: UUID,
        serverTime: Int64,
        refusal: SyncRefusal?,
        outcomes: [Outcome],
        settled: [SyncChangeName]? = nil
    ) {
        self.epoch = epoch
        self.serverTime = serverTime
        self.refusal = refusal
        self.outcomes = outcomes
        self.settled = settled
    }
}

extension SyncPushResponse {
    /// Whether the answer has one outcome for each of `count` changes, and one name each when it
    /// names them: what a part of a push, or a push forwarded in part, must answer before its
    /// outcomes are put back in their places.
    ///
    /// ```swift
    /// guard answer.answersEach(of: part.changes.count) else { throw mismatch }
    /// ```
    package func answersEach(of count: Int) -> Bool {
        outcomes.count == count && (settled?.count ?? count) == count
    }
}
