#if Configuration
import Foundation

/// Waits until `condition` holds, checking every few milliseconds for at most `seconds`; returns
/// whether it held. For effects of the provider's own task, which the test cannot await.
func eventually(seconds: Double = 10, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return try await condition()
}
#endif
