/// A device process's answer to one command (`ValueStoreTestHelper sync-device`), printed as one
/// line of JSON: the fields of what the command does, or `error` when it failed.
package struct SyncDeviceAnswer: Codable, Sendable {
    /// Why the command failed; `nil` when it did what it says.
    package var error: String?
    /// A local write, as the device observed it: `save`, `update`, `remove`.
    package var written: ChaosObservedWrite?
    /// What `read` loaded.
    package var value: String?
    /// The replica, for `dump`.
    package var dump: SyncReplicaDump?

    package init(
        error: String? = nil,
        written: ChaosObservedWrite? = nil,
        value: String? = nil,
        dump: SyncReplicaDump? = nil
    ) {
        self.error = error
        self.written = written
        self.value = value
        self.dump = dump
    }
}
