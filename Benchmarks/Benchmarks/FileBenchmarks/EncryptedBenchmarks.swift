import Benchmark
import Foundation
import Synchronization
import ValueStore

#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif

/// The encrypted store against the file stores' raw durable write plus a raw AES-256-GCM seal
/// of the same bytes (saves), and a raw read, open and decode (loads). The floor seals under a
/// 44-byte authenticated header and writes header, ciphertext and tag, as the store does.
func registerEncryptedRows<Value: Codable & Sendable & Equatable>(
    _ value: Value,
    size: String,
    saves: Benchmark.Configuration,
    loads: Benchmark.Configuration
) {
    let json = Format<Value>.json
    let header = Data(repeating: 0x56, count: 44)

    @Sendable func seal(_ plaintext: Data, _ key: SymmetricKey) throws -> Data {
        let box = try AES.GCM.seal(plaintext, using: key, nonce: AES.GCM.Nonce(), authenticating: header)
        return header + box.nonce.withUnsafeBytes { Data($0) } + box.ciphertext + box.tag
    }

    @Sendable func open(_ sealed: Data, _ key: SymmetricKey) throws -> Data {
        let nonce = try AES.GCM.Nonce(data: sealed[44..<56])
        let box = try AES.GCM.SealedBox(
            nonce: nonce, ciphertext: sealed[56..<(sealed.count - 16)], tag: sealed.suffix(16))
        return try AES.GCM.open(box, using: key, authenticating: header)
    }

    benchmarkInFreshDirectory("encryptedFile \(size): save, floor: raw seal + durable write", configuration: saves) {
        directory in
        (RawFile(directory.appending(path: "value.enc")), SymmetricKey(size: .bits256))
    } measure: { benchmark, state in
        let (file, key) = state
        for _ in benchmark.scaledIterations {
            try file.replace(with: seal(json.encode(value), key))
        }
    }

    benchmarkInFreshDirectory("encryptedFile \(size): load, floor: raw read + open + decode", configuration: loads) {
        directory in
        let file = RawFile(directory.appending(path: "value.enc"))
        let key = SymmetricKey(size: .bits256)
        try file.replace(with: seal(json.encode(value), key))
        try expect(json.decode(open(file.contents(), key)) == value, "the floor reads back the value it wrote")
        return (file, key)
    } measure: { benchmark, state in
        let (file, key) = state
        for _ in benchmark.scaledIterations {
            blackHole(try json.decode(open(file.contents(), key)))
        }
    }

    benchmarkInFreshDirectory("encryptedFile \(size): save", configuration: saves) { directory in
        ValueStore<Void, Value>.encryptedFile(directory.appending(path: "value.enc"), key: .random())
    } measure: { benchmark, store in
        for _ in benchmark.scaledIterations {
            blackHole(try await store.save(value))
        }
    }

    benchmarkInFreshDirectory("encryptedFile \(size): load", configuration: loads) { directory in
        let url = directory.appending(path: "value.enc")
        let store = ValueStore<Void, Value>.encryptedFile(url, key: .random())
        try await store.save(value)
        try expect(
            Data(contentsOf: url).count == json.encode(value).count + 60, "the store writes what the floor writes")
        try expect(await store.load() == value, "the store reads back the value it wrote")
        return store
    } measure: { benchmark, store in
        for _ in benchmark.scaledIterations {
            blackHole(try await store.load())
        }
    }
}

/// A load of an unchanged encrypted file against a plain read and decode of the same value, with
/// no decryption: what an app pays for keeping a small secret encrypted, and the ratio a client
/// measured at 1.65 to 1.72 while the per-load cost of the key and item checks went unwatched.
/// The file is written once and never changes, as between two launches of an app.
func registerUnchangedEncryptedFileRows<Value: Codable & Sendable & Equatable>(
    _ value: Value,
    size: String,
    configuration: Benchmark.Configuration
) {
    let json = Format<Value>.json
    let name = "encryptedFile \(size): load of an unchanged encrypted file"

    benchmarkInFreshDirectory("\(name), floor: raw read + decode", configuration: configuration) { directory in
        let file = RawFile(directory.appending(path: "value.json"))
        try file.replace(with: json.encode(value))
        try expect(json.decode(file.contents()) == value, "the floor reads back the value it wrote")
        return file
    } measure: { benchmark, file in
        for _ in benchmark.scaledIterations {
            blackHole(try json.decode(file.contents()))
        }
    }

    // The same plain read as an app writes it, with Foundation: the floor a client measuring
    // apart from the project is likely to use. The raw read above stays the one to beat.
    benchmarkInFreshDirectory("\(name), floor: Data(contentsOf:) + decode", configuration: configuration) {
        directory in
        let url = directory.appending(path: "value.json")
        try json.encode(value).write(to: url)
        return url
    } measure: { benchmark, url in
        for _ in benchmark.scaledIterations {
            blackHole(try json.decode(Data(contentsOf: url)))
        }
    }

    // The plain file store of the same value, for comparison: what a load costs before any
    // decryption (the hop off the caller's executor, the file's checks, the combinators).
    benchmarkInFreshDirectory("jsonFile \(size): load, for comparison", configuration: configuration) { directory in
        let store = ValueStore<Void, Value>.jsonFile(directory.appending(path: "value.json"))
        try await store.save(value)
        return store
    } measure: { benchmark, store in
        for _ in benchmark.scaledIterations {
            blackHole(try await store.load())
        }
    }

    // The same read and decode with the decryption written by hand with swift-crypto, on the
    // store's own file: what the store's load is judged against for its own overhead, since a
    // fresh AES-GCM open of a small file costs more than the decode beside it.
    benchmarkInFreshDirectory("\(name), floor: raw read + open + decode", configuration: configuration) { directory in
        let url = directory.appending(path: "value.enc")
        let key = EncryptionKey.random()
        try await ValueStore<Void, Value>.encryptedFile(url, key: key).save(value)
        return (RawFile(url), SymmetricKey(data: key.rawRepresentation), Data(url.lastPathComponent.utf8))
    } measure: { benchmark, state in
        let (file, key, identity) = state
        for _ in benchmark.scaledIterations {
            blackHole(try json.decode(openByHand(file.contents(), key: key, identity: identity)))
        }
    }

    benchmarkInFreshDirectory(name, configuration: configuration) { directory in
        let url = directory.appending(path: "value.enc")
        let store = ValueStore<Void, Value>.encryptedFile(url, key: .random())
        try await store.save(value)
        try expect(await store.load() == value, "the store reads back the value it wrote")
        return store
    } measure: { benchmark, store in
        for _ in benchmark.scaledIterations {
            blackHole(try await store.load())
        }
    }
}

/// A load of a small encrypted file that changed since the last load, so the store decrypts it
/// every time rather than recognising the bytes it opened last. Each iteration first writes the
/// other of two versions the store sealed of the same value (each with its own nonce, both the
/// same length) in place and without `fsync`, in the row and in its floor alike, so the ratio is the decryption path's.
func registerChangedEncryptedFileRows<Value: Codable & Sendable & Equatable>(
    _ value: Value,
    size: String,
    configuration: Benchmark.Configuration
) {
    let json = Format<Value>.json
    let name = "encryptedFile \(size): load of a file that changed since the last load"

    /// Two versions of the file, sealed by the store under `key`.
    @Sendable func versions(_ url: URL, _ key: EncryptionKey) async throws -> [Data] {
        let store = ValueStore<Void, Value>.encryptedFile(url, key: key)
        var versions: [Data] = []
        for _ in 0..<2 {
            try await store.save(value)
            versions.append(try Data(contentsOf: url))
        }
        return versions
    }

    benchmarkInFreshDirectory("\(name), floor: write + raw read + open + decode", configuration: configuration) {
        directory in
        let url = directory.appending(path: "value.enc")
        let key = EncryptionKey.random()
        let secret = SymmetricKey(data: key.rawRepresentation)
        return (RawFile(url), try await versions(url, key), secret, Data("value.enc".utf8), Alternation())
    } measure: { benchmark, state in
        let (file, versions, key, identity, alternation) = state
        for _ in benchmark.scaledIterations {
            try file.overwrite(with: versions[alternation.next()])
            blackHole(try json.decode(openByHand(file.contents(), key: key, identity: identity)))
        }
    }

    benchmarkInFreshDirectory(name, configuration: configuration) { directory in
        let url = directory.appending(path: "value.enc")
        let key = EncryptionKey.random()
        let store = ValueStore<Void, Value>.encryptedFile(url, key: key)
        return (RawFile(url), try await versions(url, key), store, Alternation())
    } measure: { benchmark, state in
        let (file, versions, store, alternation) = state
        for _ in benchmark.scaledIterations {
            try file.overwrite(with: versions[alternation.next()])
            blackHole(try await store.load())
        }
    }
}

/// Opens a file the store wrote, by hand with swift-crypto: the floor the store's decryption is
/// judged against. The store's layout is a 44-byte header (nonce at 24), ciphertext, tag; the
/// header and the file's identity (by default its name) are authenticated.
func openByHand(_ sealed: Data, key: SymmetricKey, identity: Data) throws -> Data {
    var combined = Data(sealed[24..<36])
    combined.append(sealed[44...])
    let box = try AES.GCM.SealedBox(combined: combined)
    return try AES.GCM.open(box, using: key, authenticating: sealed[0..<44] + identity)
}

/// Which of two versions to write next: each sample runs one iteration, so the alternation lives
/// in the benchmark's state rather than in the iteration's index.
final class Alternation: Sendable {
    private let count = Atomic<Int>(0)

    func next() -> Int {
        count.add(1, ordering: .relaxed).newValue % 2
    }
}

/// What the decryption alone costs, with no file: one AES-256-GCM open of the same sealed bytes,
/// held in memory, and the JSON decode alone, to split what a store's load row shows.
func registerDecryptionAloneRows<Value: Codable & Sendable & Equatable>(
    _ value: Value,
    size: String,
    configuration: Benchmark.Configuration
) {
    let json = Format<Value>.json
    let key = SymmetricKey(size: .bits256)
    let header = Data(repeating: 0x56, count: 44)
    Benchmark("encryptedFile \(size): AES.GCM.open alone, in memory", configuration: configuration) { benchmark in
        let plaintext = try json.encode(value)
        let box = try AES.GCM.seal(plaintext, using: key, nonce: AES.GCM.Nonce(), authenticating: header)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try AES.GCM.open(box, using: key, authenticating: header))
        }
    }
    Benchmark("encryptedFile \(size): JSON decode alone, in memory", configuration: configuration) { benchmark in
        let plaintext = try json.encode(value)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try json.decode(plaintext))
        }
    }
}
