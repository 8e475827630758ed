#if Configuration
import Configuration

/// The configuration of a store that holds nothing, when absence is allowed: no key has a value.
struct EmptySnapshot: ConfigSnapshot, CustomStringConvertible {
    let providerName: String

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        LookupResult(encodedKey: key.description, value: nil)
    }

    var description: String { "\(providerName)[empty]" }
}
#endif
