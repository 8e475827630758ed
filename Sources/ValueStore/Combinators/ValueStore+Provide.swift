extension ValueStore where Environment: Sendable {
    /// The same store with its environment supplied once, so callers need none.
    ///
    /// ```swift
    /// let profile: ValueStore<Void, Profile> = remoteProfile.provide(session)
    /// let current = try await profile.load()
    /// ```
    ///
    /// - Parameter environment: The environment every operation receives.
    /// - Returns: A store with a `Void` environment; `update` through it stays atomic.
    @inlinable
    public func provide(_ environment: Environment) -> ValueStore<Void, Value> {
        pullback { (_: Void) in environment }
    }
}
