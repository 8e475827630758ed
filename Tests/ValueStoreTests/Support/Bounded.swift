/// Runs `operation` in a task of its own and waits for it at most `timeout`: its result, or `nil`
/// when it has not finished, so a test of something that used to hang fails instead of hanging.
/// A bound against hanging, never a measure of speed.
///
/// ```swift
/// let outcome = await unlessItHangs { try await a.move(to: b) }
/// #expect(outcome != nil, "the move finished")
/// ```
func unlessItHangs<Value: Sendable>(
    timeout: Duration = .seconds(20),
    _ operation: @escaping @Sendable () async throws -> Value
) async -> Result<Value, any Error>? {
    let outcome = Shared<Result<Value, any Error>?>(nil)
    Task {
        do {
            outcome.value = .success(try await operation())
        } catch {
            outcome.value = .failure(error)
        }
    }
    guard await eventually(timeout: timeout, { outcome.value != nil }) else { return nil }
    return outcome.value
}
