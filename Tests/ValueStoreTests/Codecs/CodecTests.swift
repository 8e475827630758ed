import Foundation
import Testing
import ValueStore

@Suite struct CodecTests {
    @Test func jsonRoundTrips() throws {
        let codec = Codec<Settings, Data>.json
        #expect(try codec.from(codec.to(.custom)) == .custom)
    }

    @Test func jsonUsesTheGivenEncoder() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let codec = Codec<Settings, Data>.json(encoder: encoder, decoder: JSONDecoder())
        let text = String(decoding: try codec.to(.standard), as: UTF8.self)
        #expect(text.hasPrefix("{\n  \"fontSize\" : 14"))
    }

    @Test(arguments: [
        ("", ValueStoreError.Code.corrupted, "empty"),
        ("{\"theme\": ", .corrupted, "not valid JSON"),
        ("[1, 2]", .decodingFailed, "expected"),
        ("{\"theme\": \"dark\"}", .decodingFailed, "missing key 'fontSize'"),
        ("{\"theme\": \"dark\", \"fontSize\": \"big\", \"recent\": []}", .decodingFailed, "fontSize"),
        ("{\"theme\": \"dark\", \"fontSize\": 1, \"recent\": [1]}", .decodingFailed, "recent[0]"),
    ])
    func jsonClassifiesBadInput(input: String, code: ValueStoreError.Code, reason: String) throws {
        let error = #expect(throws: ValueStoreError.self) {
            try Codec<Settings, Data>.json.from(Data(input.utf8))
        }
        #expect(error?.code == code)
        #expect(error?.reason?.contains(reason) == true, "\(String(describing: error?.reason))")
    }

    @Test func validJSONOfTheWrongTypeIsDecodingFailedNotCorrupted() throws {
        let error = #expect(throws: ValueStoreError.self) { try Codec<Theme, Data>.json.from(Data("\"sepia\"".utf8)) }
        #expect(error?.code == .decodingFailed)
        #expect(error?.reason?.contains("not valid JSON") == false, "\(String(describing: error?.reason))")
    }

    @Test func propertyListRoundTripsInBothFormats() throws {
        for codec in [Codec<Settings, Data>.propertyList, .propertyList(format: .xml)] {
            #expect(try codec.from(codec.to(.custom)) == .custom)
        }
        let xml = String(decoding: try Codec<Settings, Data>.propertyList(format: .xml).to(.standard), as: UTF8.self)
        #expect(xml.contains("<plist"))
        let binary = try Codec<Settings, Data>.propertyList.to(.standard)
        #expect(binary.starts(with: Data("bplist".utf8)))
    }

    @Test func propertyListClassifiesBadInput() throws {
        let empty = #expect(throws: ValueStoreError.self) { try Codec<Settings, Data>.propertyList.from(Data()) }
        #expect(empty?.code == .corrupted)
        let garbage = #expect(throws: ValueStoreError.self) {
            try Codec<Settings, Data>.propertyList.from(Data("not a plist".utf8))
        }
        #expect(garbage?.code == .corrupted)
        let wrongShape = #expect(throws: ValueStoreError.self) {
            try Codec<Settings, Data>.propertyList.from(Codec<[Int], Data>.propertyList.to([1]))
        }
        #expect(wrongShape?.code == .decodingFailed)
    }

    @Test func topLevelScalarsRoundTripAsJSON() throws {
        #expect(try Codec<Int, Data>.json.from(Codec<Int, Data>.json.to(5)) == 5)
        #expect(try Codec<String, Data>.json.from(Codec<String, Data>.json.to("x")) == "x")
    }

    @Test func propertyListScalarsRoundTripOrFailToEncode() throws {
        // Foundation on Linux refuses top-level scalars in property lists; Apple's accepts them.
        // Either way nothing half-encoded comes out.
        let codec = Codec<String, Data>.propertyList
        do {
            #expect(try codec.from(codec.to("x")) == "x")
        } catch let error as ValueStoreError {
            #expect(error.code == .encodingFailed)
        }
    }

    @Test func utf8RoundTripsAndRejectsInvalidBytes() throws {
        #expect(try Codec<String, Data>.utf8.from(Codec<String, Data>.utf8.to("héllo")) == "héllo")
        let error = #expect(throws: ValueStoreError.self) { try Codec<String, Data>.utf8.from(Data([0xFF, 0xFE])) }
        #expect(error?.code == .corrupted)
    }

    @Test func rawRepresentableRoundTripsAndRejectsUnknownRawValues() throws {
        let codec = Codec<Theme, String>.rawRepresentable
        #expect(try codec.to(.dark) == "dark")
        #expect(try codec.from("light") == .light)
        let error = #expect(throws: ValueStoreError.self) { try codec.from("sepia") }
        #expect(error?.code == .decodingFailed)
        #expect(error?.reason?.contains("sepia") == true)
    }
}
