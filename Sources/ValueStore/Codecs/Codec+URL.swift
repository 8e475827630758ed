public import Foundation

extension Codec where Input == URL, Output == String {
    /// Stores URLs as strings: a file URL as its path, any other URL as its absolute string.
    ///
    /// ```swift
    /// let lastExport = ValueStore<Void, String>.inMemory().coded(Codec<URL, String>.url)
    /// try await lastExport.save(URL(filePath: "/tmp/export.csv"))   // stores "/tmp/export.csv"
    /// ```
    ///
    /// A string that starts with `/` decodes as a file URL; a path that ends in `/` is a
    /// directory. Any other string must be an absolute URL with a scheme, such as
    /// `https://example.com/a`. An empty string, a relative path or a string that is not a URL
    /// fails with ``ValueStoreError/Code/decodingFailed``.
    public static var url: Self {
        Self(
            to: { url in
                url.isFileURL ? url.path(percentEncoded: false) : url.absoluteString
            },
            from: { string in
                if string.hasPrefix("/") {
                    return URL(filePath: string, directoryHint: .inferFromPath)
                }
                guard let url = URL(string: string), url.scheme != nil else {
                    throw ValueStoreError(
                        .decodingFailed,
                        reason: "\"\(string)\" is neither an absolute URL nor an absolute file path"
                    )
                }
                return url
            }
        )
    }
}
