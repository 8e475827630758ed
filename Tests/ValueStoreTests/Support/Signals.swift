/// Whether `stream` holds a signal now, without waiting for one: a cancelled iteration gets
/// a buffered element, or `nil` at once. The stream ends, so ask last.
///
/// ```swift
/// watches.sendChange(of: "count.json", in: directory)  // handled before it returns
/// #expect(await !hasSignal(signals))
/// ```
func hasSignal(_ stream: AsyncStream<Void>) async -> Bool {
    await Task {
        withUnsafeCurrentTask { $0?.cancel() }
        var iterator = stream.makeAsyncIterator()
        return await iterator.next() != nil
    }.value
}
