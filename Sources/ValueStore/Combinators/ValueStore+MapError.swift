extension ValueStore {
    /// The same store, replacing the errors it throws.
    ///
    /// ```swift
    /// let settings = fileSettings.mapError { error in
    ///     AppError.persistence(error)
    /// }
    /// ```
    ///
    /// > Important: `transform` sees every error, ``ValueStoreError/notFound`` included. Return
    /// > absence unchanged if combinators above this one should still recover from it.
    ///
    /// - Parameter transform: Returns the error to throw instead.
    /// - Returns: A store that throws transformed errors; errors thrown by an `update`
    ///   transform pass through unchanged, and `update` stays atomic.
    @inlinable
    public func mapError(
        _ transform: @escaping @Sendable (_ error: any Error) -> any Error
    ) -> Self {
        let paths = loadPaths { error in throw transform(error) }
        return Self(
            label: label,
            load: paths.load,
            loadImmediately: paths.loadImmediately,
            save: { value, environment in
                do {
                    return try await self.save(value, environment)
                } catch {
                    throw transform(error)
                }
            },
            remove: { environment in
                do {
                    try await self.remove(environment)
                } catch {
                    throw transform(error)
                }
            },
            update: { environment, body in
                do {
                    return try await self.update(environment) { value in
                        do {
                            try await body(&value)
                        } catch let nothing as NothingToUpdate {
                            throw nothing
                        } catch {
                            throw BodyFailure(error: error)
                        }
                    }
                } catch let failure as BodyFailure {
                    throw failure.error
                } catch let nothing as NothingToUpdate {
                    // `update(_:)` found nothing stored: the store's absence, mapped like any other.
                    throw transform(ValueStoreError(.notFound, store: nothing.store))
                } catch {
                    throw transform(error)
                }
            },
            changeSignals: changeSignals
        ).holdingSecrets(holdsSecrets)
    }
}

/// Carries an error thrown by an update's body past an error-mapping layer, so that only the
/// store's own errors are transformed.
@usableFromInline
struct BodyFailure: Error {
    @usableFromInline let error: any Error

    @inlinable
    init(error: any Error) {
        self.error = error
    }
}
