/// Runs `operation` `count` times at once and waits for all of them.
func concurrently(
    _ count: Int,
    _ operation: @escaping @Sendable (_ index: Int) async throws -> Void
) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for index in 0..<count {
            group.addTask { try await operation(index) }
        }
        try await group.waitForAll()
    }
}
