// What `StoredValue` decides from a failure or a value: whether a write's failure means the stored
// data could not be read, and whether a value is an optional holding `nil`.

/// Whether a write's failure says the stored data could not be read, as opposed to a write
/// failing: the data is then left as it is until a load reads it. `io` can be either, so it is
/// not one: the load after the write decides.
func isReadFailure(_ error: any Error) -> Bool {
    if error is DecodingError { return true }
    guard let error = error as? ValueStoreError else { return false }
    return readFailureCodes.contains(error.code)
}

private let readFailureCodes: Set<ValueStoreError.Code> = [
    .corrupted, .decodingFailed, .newerVersion, .unsupportedFormat, .wrongKey, .authenticationFailed, .itemMismatch,
    .locked,
]

/// Whether `value` is an optional holding `nil`.
func isNil<Value>(_ value: Value) -> Bool {
    guard let optional = value as? any OptionalValue else { return false }
    return optional.isNone
}

private protocol OptionalValue {
    var isNone: Bool { get }
}

extension Optional: OptionalValue {
    var isNone: Bool { self == nil }
}
