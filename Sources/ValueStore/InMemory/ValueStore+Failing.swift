extension ValueStore {
    /// A store whose every operation throws `error`: for testing how code handles failures.
    ///
    /// ```swift
    /// let broken = ValueStore<Void, Settings>.failing(
    ///     ValueStoreError(.io, reason: "the disk is full")
    /// )
    /// ```
    ///
    /// - Parameter error: The error that `load`, `save` and `remove` throw.
    /// - Returns: A store that always fails.
    public static func failing(_ error: any Error) -> Self {
        Self(
            load: { _ in throw error },
            save: { _, _ in throw error },
            remove: { _ in throw error }
        )
    }

    /// A placeholder store whose operations throw an error naming the store and the operation:
    /// for dependencies a test or preview does not expect to be used.
    ///
    /// ```swift
    /// let persistence = Persistence(
    ///     settings: .inMemory(.standard),
    ///     token: .unimplemented("Persistence.token")
    /// )
    /// ```
    ///
    /// - Parameters:
    ///   - description: What the store stands for, printed in the error.
    ///   - fileID: The file that created the store, printed in the error.
    ///   - line: The line that created the store, printed in the error.
    /// - Returns: A store whose operations throw ``ValueStoreError/Code/unimplemented``.
    public static func unimplemented(
        _ description: String = "unimplemented store",
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) -> Self {
        let store = "\(description) (created at \(fileID):\(line))"
        let failure: @Sendable (String) -> ValueStoreError = { operation in
            ValueStoreError(.unimplemented, store: store, reason: "'\(operation)' was called")
        }
        return Self(
            load: { _ in throw failure("load") },
            save: { _, _ in throw failure("save") },
            remove: { _ in throw failure("remove") }
        )
    }
}
