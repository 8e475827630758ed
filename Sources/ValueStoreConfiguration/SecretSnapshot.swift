#if Configuration
import Configuration

/// A snapshot whose every value is a secret, for an encrypted store: access reporters print
/// them redacted.
struct SecretSnapshot: ConfigSnapshot, CustomStringConvertible {
    let base: any ConfigSnapshot

    var providerName: String { base.providerName }

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        var result = try base.value(forKey: key, type: type)
        result.value?.isSecret = true
        return result
    }

    var description: String { "\(providerName)[secret]" }
}
#endif
