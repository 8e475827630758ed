import Foundation
import Testing
import ValueStore

@Suite struct ValueStoreErrorTests {
    @Test func descriptionReadsAsASentence() {
        let error = ValueStoreError(
            .corrupted,
            store: "file '/tmp/settings.json'",
            reason: "the file is empty (0 bytes)"
        )
        #expect(
            error.description
                == "The stored data is corrupted in file '/tmp/settings.json': the file is empty (0 bytes)."
        )
    }

    @Test func theReasonExplainsTheUnderlyingError() {
        let error = ValueStoreError(.io, reason: "rename failed", underlyingError: Boom(id: 3))
        #expect(error.description == "An I/O operation failed: rename failed.")
        #expect(error.debugDescription.hasPrefix("An I/O operation failed: rename failed. Underlying error: "))
        #expect(error.debugDescription.hasSuffix("Boom(id: 3)"))
        #expect(error.underlyingError as? Boom == Boom(id: 3))
    }

    @Test func withoutAReasonTheUnderlyingErrorExplains() {
        let error = ValueStoreError(.decodingFailed, store: "file 'a'", underlyingError: Boom(id: 4))
        #expect(error.description == "The stored data could not be decoded in file 'a': Boom(id: 4).")
    }

    @Test func aReasonEndingInPunctuationGetsNoSecondPeriod() {
        #expect(ValueStoreError(.io, reason: "it broke.").description == "An I/O operation failed: it broke.")
    }

    @Test func absenceHasAShortDescription() {
        #expect(ValueStoreError.notFound.description == "No value is stored.")
    }

    @Test func newerVersionSaysANewerAppWroteTheData() {
        let error = ValueStoreError(
            .newerVersion, store: "file 'a.json'", reason: "stored by schema 4; this app reads up to 3")
        #expect(
            error.description
                == "The stored data was written by a newer version of the app in file 'a.json': "
                + "stored by schema 4; this app reads up to 3.")
        #expect(error == ValueStoreError.newerVersion)
        #expect(error != ValueStoreError.notFound)
    }

    @Test func customCodesPrintTheirName() {
        let error = ValueStoreError(.init("offline"))
        #expect(error.description == "The store failed (offline).")
    }

    @Test func catchMatchesByCode() {
        func classify(_ error: any Error) -> String {
            do {
                throw error
            } catch ValueStoreError.notFound {
                return "absent"
            } catch let error as ValueStoreError where error.code == .corrupted {
                return "corrupt"
            } catch {
                return "other"
            }
        }
        #expect(classify(ValueStoreError(.notFound, store: "file 'a'")) == "absent")
        #expect(classify(ValueStoreError(.corrupted, store: "file 'a'")) == "corrupt")
        #expect(classify(Boom()) == "other")
    }

    @Test func equalityComparesCodesOnly() {
        #expect(ValueStoreError(.notFound, store: "a") == ValueStoreError.notFound)
        #expect(ValueStoreError(.io) != ValueStoreError(.corrupted))
    }
}
