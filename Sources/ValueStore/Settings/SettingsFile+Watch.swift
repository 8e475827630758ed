extension SettingsFile {
    /// Forgets the entries, and with them every key store's decoded value, when the file changed
    /// since the last check: called by a key's load while the file's directory is not watched (it
    /// is missing, the watch was lost, or no inotify instance is left), when no signal would say
    /// that another process changed it. One `stat`, off the caller's executor.
    @usableFromInline
    func forgetEntriesIfTheFileChanged() async {
        if await freshness.hasChanged() {
            replaceEntries(with: nil)
        }
    }
}
