extension ValueStore where Environment == Void {
    /// The same store, accepting and ignoring any environment, so it fits where one is expected.
    ///
    /// ```swift
    /// let cache: ValueStore<Session, Profile> = ValueStore<Void, Profile>.inMemory().require(Session.self)
    /// ```
    ///
    /// - Parameter type: The environment type to accept.
    /// - Returns: A store over `type` that behaves exactly like this one.
    @inlinable
    public func require<NewEnvironment>(
        _ type: NewEnvironment.Type = NewEnvironment.self
    ) -> ValueStore<NewEnvironment, Value> {
        fixing(())
    }
}
