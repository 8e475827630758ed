public import ValueStore

extension ValueStoreError.Code {
    /// The sync server refused a change for good: it is in the replica's rejected changes, with
    /// its value, and the key went back to the server's value.
    ///
    /// ```swift
    /// catch let error as ValueStoreError where error.code == .rejected {
    ///     showRejected(replica.status.rejectedChanges)
    /// }
    /// ```
    public static let rejected = Self("rejected")
}
