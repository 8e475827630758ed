#if Configuration
import Foundation

/// The document swift-configuration's `ProviderCompatTest` expects, as JSON: the values it reads,
/// copied from swift-configuration's own JSON provider tests.
enum CompatDocument {
    static let json = Data(
        """
        {
            "string": "Hello", "int": 42, "double": 3.14, "bool": true, "bytes": "bWFnaWM=",
            "other": {
                "string": "Other Hello", "int": 24, "double": 2.72, "bool": false, "bytes": "bWFnaWMy",
                "stringy": {"array": ["Hello", "Swift"]},
                "inty": {"array": [16, 32]},
                "doubly": {"array": [0.9, 1.8]},
                "booly": {"array": [false, true, true]},
                "byteChunky": {"array": ["bWFnaWM=", "bWFnaWMy", "bWFnaWM="]}
            },
            "stringy": {"array": ["Hello", "World"]},
            "inty": {"array": [42, 24]},
            "doubly": {"array": [3.14, 2.72]},
            "booly": {"array": [true, false]},
            "byteChunky": {"array": ["bWFnaWM=", "bWFnaWMy"]}
        }
        """.utf8)
}

/// A flags document: `{"checkout": {"enabled": true}}`.
func flagsDocument(checkout: Bool, banner: String = "none") -> Data {
    Data(#"{"checkout": {"enabled": \#(checkout)}, "banner": "\#(banner)"}"#.utf8)
}

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
