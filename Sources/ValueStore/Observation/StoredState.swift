/// What a store holds at one moment: a value, nothing, or a failure to read it.
///
/// ``ValueStore/changes(environment:)`` yields one after each change.
///
/// ```swift
/// for await state in settings.changes() {
///     switch state {
///     case .value(let settings): apply(settings)
///     case .absent: apply(.standard)
///     case .failed(let error): show(error)
///     }
/// }
/// ```
public enum StoredState<Value> {
    /// The store holds this value.
    case value(Value)
    /// The store holds nothing: its load threw ``ValueStoreError/notFound``.
    case absent
    /// The store's load failed for another reason: corrupt data, an I/O error, a locked vault.
    case failed(any Error)

    /// Loads a store and says what it holds.
    ///
    /// ```swift
    /// let state = await StoredState { try await settings.load() }
    /// ```
    ///
    /// - Parameter load: Loads the value; ``ValueStoreError/notFound`` means absence.
    public init(loading load: () async throws -> Value) async {
        do {
            self = .value(try await load())
        } catch ValueStoreError.notFound {
            self = .absent
        } catch {
            self = .failed(error)
        }
    }

    /// The stored value, or `nil` when the store is empty or failed.
    ///
    /// ```swift
    /// let theme = state.value ?? .system
    /// ```
    public var value: Value? {
        if case .value(let value) = self { value } else { nil }
    }

    /// The failure, or `nil` when the store was read.
    ///
    /// ```swift
    /// if let error = state.error { show(error) }
    /// ```
    public var error: (any Error)? {
        if case .failed(let error) = self { error } else { nil }
    }
}

extension StoredState: Sendable where Value: Sendable {}
