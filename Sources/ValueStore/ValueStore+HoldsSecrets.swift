extension ValueStore {
    /// This store, holding secrets when `holdsSecrets` is: how a combinator passes
    /// ``holdsSecrets`` on from the store it wraps, as it passes ``label``.
    @inlinable
    package func holdingSecrets(_ holdsSecrets: Bool) -> Self {
        var store = self
        store.holdsSecrets = holdsSecrets
        return store
    }
}
