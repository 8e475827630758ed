extension ValueStore {
    /// The same store over another value type, converted by a codec.
    ///
    /// ```swift
    /// let settings: ValueStore<Void, Settings> = dataStore.coded(Codec<Settings, Data>.json)
    /// ```
    ///
    /// Conversion failures become a ``ValueStoreError`` that names this store: stored bytes
    /// that cannot be read throw ``ValueStoreError/Code/corrupted`` or
    /// ``ValueStoreError/Code/decodingFailed`` (never ``ValueStoreError/Code/notFound``), and a
    /// value that cannot be encoded throws ``ValueStoreError/Code/encodingFailed`` before
    /// anything is written.
    ///
    /// - Parameter codec: Converts saved values to stored ones (`to`) and back (`from`).
    /// - Returns: A store of the codec's input type; `update` through it stays atomic.
    @inlinable
    public func coded<NewValue>(_ codec: Codec<NewValue, Value>) -> ValueStore<Environment, NewValue> {
        let store = label
        return map(
            load: { stored in
                do {
                    return try codec.from(stored)
                } catch {
                    throw ValueStoreError(decoding: error, as: nil).naming(store)
                }
            },
            save: { value in try codec.encode(value, store: store) }
        )
    }
}

extension Codec {
    /// `to(input)`, its failure thrown as ``ValueStoreError`` naming `store`, as ``ValueStore/coded(_:)``
    /// reports it.
    @usableFromInline
    func encode(_ input: Input, store: String) throws -> Output {
        do {
            return try to(input)
        } catch {
            throw ValueStoreError(encoding: error, as: nil).naming(store)
        }
    }
}
