#if Observability
import Foundation
import Testing
import ValueStore
import ValueStoreObservability

/// The Observability guide's examples, as the guide shows them.
@Suite struct ObservabilityGuideExamplesTests {
    struct Profile: Codable, Equatable, Sendable {
        var name: String
    }

    @Test func anInstrumentedStoreDoesWhatItDid() async throws {
        let url = FileManager.default.temporaryDirectory.appending(path: "profile-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: url) }
        let profile = ValueStore<Void, Profile>.jsonFile(url)
            .instrumented(as: "profile")
        try await profile.save(Profile(name: "Ada"))
        #expect(try await profile.load() == Profile(name: "Ada"))
    }
}
#endif
