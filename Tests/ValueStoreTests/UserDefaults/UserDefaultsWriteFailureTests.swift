import Foundation
import Testing
import ValueStoreTestSupport

/// A `userDefaults` save that Foundation cannot write to disk changes nothing. Tested in a child
/// process: once one suite's file cannot be written, Foundation on Linux fails the
/// `synchronize()` of every suite in the process, which would break the tests running beside it.
@Suite struct UserDefaultsWriteFailureTests {
    #if os(Linux)
    @Test func aSaveUserDefaultsCannotWriteLeavesTheValueAsItWas() async throws {
        try await TemporaryDirectory.with { directory in
            let helper = try HelperProcess(
                environment: [
                    "XDG_CONFIG_HOME": directory.path(percentEncoded: false),
                    "HOME": directory.path(percentEncoded: false),
                ],
                "userdefaults-unwritable", "ValueStoreTests.\(UUID().uuidString)"
            )
            #expect(await helper.exitStatus() == 0)
            #expect(helper.lines() == ["save io", "load 1"], "the failed save throws io and changes nothing")
        }
    }
    #endif
}
