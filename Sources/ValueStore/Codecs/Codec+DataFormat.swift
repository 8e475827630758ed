import Foundation

extension Codec where Output == Data {
    /// A codec for a data format such as JSON or a property list: `encode` and `decode` do the
    /// work, and their failures become ``ValueStoreError``s that name `format`. Empty data is
    /// ``ValueStoreError/Code/corrupted`` before `decode` sees it; data `decode` refuses is
    /// ``ValueStoreError/Code/corrupted`` when `parses` says it is not well-formed, and
    /// ``ValueStoreError/Code/decodingFailed`` when it is (a well-formed value of the wrong shape).
    static func dataFormat(
        _ format: String,
        encode: @escaping @Sendable (_ input: Input) throws -> Data,
        decode: @escaping @Sendable (_ data: Data) throws -> Input,
        parses: @escaping @Sendable (_ data: Data) -> Bool
    ) -> Self {
        Self(
            to: { value in
                do {
                    return try encode(value)
                } catch {
                    throw ValueStoreError(encoding: error, as: format)
                }
            },
            from: { data in
                do {
                    try Data.requireContent(data, format: format)
                    return try decode(data)
                } catch {
                    throw ValueStoreError(decoding: error, as: format, parses: { parses(data) })
                }
            }
        )
    }
}
