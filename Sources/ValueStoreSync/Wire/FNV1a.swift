/// The 64-bit FNV-1a hash: the digest by which a server tells a repeated change from another
/// that reused its stamp, and what shortens a long account name into a folder name.
struct FNV1a: Sendable {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    /// Mixes `bytes` into the hash.
    mutating func mix(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            value = (value ^ UInt64(byte)) &* 0x100_0000_01b3
        }
    }

    /// The hash as 16 lower-case hex digits.
    var hex: String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
