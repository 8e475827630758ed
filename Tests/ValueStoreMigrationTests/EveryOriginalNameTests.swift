import Foundation
import Testing
import ValueStore

// One call of each public name of swift-valuestore 0.1.4, spelled as 0.1.4's users wrote it. The
// target builds with deprecation warnings allowed, so a name that stops compiling fails the build
// here. The names that are gone fail to compile with a message naming their replacement, so they
// cannot be called here; they are listed at the end, and Documentation/MigratingFromValueStore0.md
// maps every name.

/// An environment for the stores that need one.
struct Session: Sendable {
    var user = "ada"
}

/// A `RawRepresentable` value, for `representing`.
enum Mode: String, Sendable {
    case fast, safe
}

@Suite struct EveryOriginalNameTests {
    @Test func theStoreItself() async throws {
        let box = Reference<Int>(1)
        let withEnvironment = ValueStore<Session, Int>(
            load: { _ in try await box.valueStore.load() },
            save: { value, _ in try await box.valueStore.save(value) },
            remove: { _ in try await box.valueStore.remove() }
        )
        let withoutEnvironment = ValueStore<Void, Int>(
            load: { try await box.valueStore.load() },
            save: { value in try await box.valueStore.save(value) },
            remove: { try await box.valueStore.remove() }
        )
        #expect(try await withEnvironment.load(Session()) == 1)
        #expect(try await withEnvironment.save(2, Session()) == 2)
        try await withEnvironment.remove(Session())
        #expect(try await withoutEnvironment.save(3) == 3)
        #expect(try await withoutEnvironment.load() == 3)
        try await withoutEnvironment.remove()
        await #expect(throws: ValueStoreError.noData) { try await withoutEnvironment.load() }
    }

    @Test func constructors() async throws {
        #expect(try await ValueStore<Void, Int>.const(1).load() == 1)
        await #expect(throws: ValueStoreError.noData) {
            try await ValueStore<Void, Int>.error(ValueStoreError.noData).load()
        }
        let new = Ref<Int>().valueStore
        #expect(try await new.replacing(Ref<Int>(4).valueStore).load() == 4)
    }

    @Test func environments() async throws {
        let perUser = ValueStore<Session, String>.const("ada")
        #expect(try await perUser.provide(Session()).load() == "ada")
        #expect(try await perUser.pullback { (name: String) in Session(user: name) }.load("bob") == "ada")
        #expect(try await ValueStore<Void, Int>.const(1).require(Session.self).load(Session()) == 1)
    }

    @Test func operations() async throws {
        let source = Reference<Int>(7).valueStore
        let target = Reference<Int>().valueStore
        #expect(try await source.copy(to: target) == 7)
        #expect(try await source.move(to: target) == 7)
        let perUser = ValueStore<Void, Int>.const(1).require(Session.self)
        #expect(try await perUser.copy(to: perUser, environment: Session()) == 1)
        #expect(try await perUser.move(to: perUser, environment: Session()) == 1)
        try await target.set(nil)
        try await target.set(8)
        try await perUser.set(2, environment: Session())
        #expect(try await target.update { $0 += 1 } == 9)
        #expect(try await perUser.update(environment: Session()) { $0 += 1 } == 1)
        #expect(try await target.load(default: 0) == 9)
        #expect(try await perUser.load(default: 0, environment: Session()) == 1)
        #expect(try await target.default(0).load() == 9)
        #expect(try await target.cached(by: Reference<Int>().valueStore).load() == 9)
    }

    /// 0.1.4's `testCached`, as it was written.
    @Test func cachedLoad() async throws {
        let store = Ref<Int>(7).valueStore
        let valueCached = try await store.cached(load: { 1 }, environment: ())
        #expect(valueCached == 7)
        try await store.remove()
        let valueNotCached = try await store.cached(load: { 11 }, environment: ())
        #expect(valueNotCached == 11)
        try await store.remove()
        #expect(try await store.cached(load: { 12 }) == 12)
    }

    @Test func conversions() async throws {
        let numbers = Reference<Int>(3).valueStore
        let text = numbers.map({ (text: String) in Int(text)! }, { (number: Int) in String(number) })
        #expect(try await text.load() == "3")
        let conversion = Conversion<String, Int>(to: { Int($0)! }, from: { String($0) })
        #expect(try await numbers.map(conversion).load() == "3")
        #expect(try conversion.to("4") == 4)
        let processed = numbers.process(
            preprocess: { (text: String) in Int(text)! },
            postprocess: { (number: Int) in String(number) }
        )
        #expect(try await processed.load() == "3")
        let failing = numbers.mapError { _ in ValueStoreError.noData }
        #expect(try await failing.load() == 3)
        let modes = Reference<String>("fast").valueStore
        #expect(try await modes.representing(by: Mode.self).load() == .fast)
        #expect(try await modes.coded(Codec<Mode, String>.representing).load() == .fast)
    }

    @Test func codecs() throws {
        let codec = Codec<Int, String>(to: { String($0) }, from: { Int($0)! })
        #expect(try codec.to(1) == "1")
        #expect(try codec.from("2") == 2)
        #expect(try codec.reversed().to("3") == 3)
        #expect(throws: ValueStoreError.noData) { try Codec<Int, String>.error(ValueStoreError.noData).to(1) }
        #expect(throws: ValueStoreError.noData) {
            try Codec<Int, String>.error(ValueStoreError.notFound).mapError { _ in ValueStoreError.noData }.to(1)
        }
        #expect(try Codec<[Int], Data>.json.from(Codec<[Int], Data>.json.to([1])) == [1])
        #expect(try Codec<[Int], Data>.jsonCodec(JSONDecoder(), JSONEncoder()).to([1]) == Data("[1]".utf8))
        #expect(try Codec<String, Data>.utf8.to("a") == Data("a".utf8))
        #expect(try Codec<URL, String>.url.from("https://example.com") == URL(string: "https://example.com"))
    }

    @Test func files() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "EveryOriginalName-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let raw = ValueStore<Void, Data>.file(folder.appending(path: "raw"))
        #expect(try await raw.save(Data([1])) == Data([1]))
        let json = ValueStore<Void, [Int]>.jsonFile(
            folder.appending(path: "numbers.json"), encoder: JSONEncoder(), decoder: JSONDecoder())
        #expect(try await json.save([1]) == [1])
    }

    @Test func userDefaults() async throws {
        let suite = temporarySuiteName()
        defer { UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite) }
        let defaults = UserDefaults(suiteName: suite)!
        let small = ValueStore<Session, Int8>.unsafeRawUserDefaults("small", userDefaults: defaults)
        #expect(try await small.save(-3, Session()) == -3)
        #expect(try await small.load(Session()) == -3)
        let big = ValueStore<Void, UInt64>.unsafeRawUserDefaults("big", userDefaults: UserDefaults(suiteName: suite)!)
        #expect(try await big.save(.max) == .max)
        let values: [any PropertyListValue] = [
            true, 1, Int8(1), Int16(1), Int32(1), Int64(1), UInt(1), UInt8(1), UInt16(1), UInt32(1), UInt64(1),
            Float(1), 1.0, "a", Data(), Date(), [1], ["a": 1],
        ]
        #expect(values.count == 18)
        let profile = ValueStore<Session, [String: String]>.unsafeJSONUserDefaults(
            "profile", userDefaults: UserDefaults(suiteName: suite)!)
        #expect(try await profile.save(["name": "ada"], Session()) == ["name": "ada"])
    }

    @Test func references() async throws {
        let reference = Reference<Int>(1)
        reference.value = 2
        #expect(try await reference.valueStore.load() == 2)
        let ref = Ref<Int>()
        #expect(ref.value == nil)
        let token = (\Holder.token).valueStore()
        let holder = Holder()
        #expect(try await token.save("abc", holder) == "abc")
    }
}

/// An object with an optional property, for the key path store.
final class Holder {
    var token: String?
}

// Gone, each failing to compile with a message that names the replacement:
// - `CodecError` and `CodecError.encoding`: `ValueStoreError` with `decodingFailed`,
//   `encodingFailed` or `corrupted`.
// - `ValueStoreError.encoding(_:)`: `ValueStoreError(.decodingFailed, underlyingError: error)`.
// - `isPresent(_:or:)`: `guard let value else { throw error }`.
// - `file(_:fileManager:)` and `jsonFile(_:fileManager:encoder:decoder:)`: the same without
//   `fileManager:`.
// - The `PropertyListValue` conformances of `NSData`, `NSString`, `NSNumber`, `NSDate`,
//   `NSArray` and `NSDictionary`: store `Data`, `String`, a number type, `Date`, `[Element]` or
//   `[String: Value]`.
