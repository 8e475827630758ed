/// The change a push outcome settles, by its key and the stamp it was pushed with: what a
/// replica checks an answer against, so that a stale or misrouted answer (a cache, a retrying
/// proxy) never settles a change the server did not answer for.
///
/// ```swift
/// let response = try await remote.push(request)
/// for (name, outcome) in zip(response.settled ?? [], response.outcomes) {
///     print("\(name.key) at \(name.stamp): \(outcome)")
/// }
/// ```
public struct SyncChangeName: Hashable, Sendable, Codable {
    /// The change's key.
    ///
    /// ```swift
    /// let key = name.key   // "theme"
    /// ```
    public var key: String
    /// The stamp the change was pushed with (``SyncRecord/stamp``, not its identity: a change
    /// stamped again is another push of it).
    ///
    /// ```swift
    /// let isThatPush = name.stamp == change.stamp
    /// ```
    public var stamp: HybridTimestamp

    /// The name of a change with `key`, pushed with `stamp`.
    ///
    /// ```swift
    /// let name = SyncChangeName(key: "theme", stamp: change.stamp)
    /// ```
    ///
    /// - Parameters:
    ///   - key: The change's key.
    ///   - stamp: The stamp it was pushed with.
    public init(key: String, stamp: HybridTimestamp) {
        self.key = key
        self.stamp = stamp
    }

    /// The name of `change`, as pushed.
    ///
    /// ```swift
    /// let names = request.changes.map(SyncChangeName.init(naming:))
    /// ```
    ///
    /// - Parameter change: A pushed change.
    public init(naming change: SyncRecord) {
        self.init(key: change.key, stamp: change.stamp)
    }
}
