package import Foundation

/// The JSON documents the configuration provider's tests store, in memory and in PostgreSQL.
package enum ConfigDocuments {
    /// The document swift-configuration's `ProviderCompatTest` expects: the values it reads,
    /// copied from swift-configuration's own JSON provider tests.
    package static let compat = Data(
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

    /// A flags document: `{"checkout": {"enabled": true}, "banner": "none"}`.
    package static func flags(checkout: Bool, banner: String = "none") -> Data {
        Data(#"{"checkout": {"enabled": \#(checkout)}, "banner": "\#(banner)"}"#.utf8)
    }
}
