#if PostgreSQL
import Foundation
import PostgresNIO
import ValueStorePostgres
import ValueStoreSync
import ValueStoreTestSupport

/// One seeded random schedule of the sync chaos test against PostgreSQL: four device processes
/// (``SyncDeviceProcess``), each with a folder and a forwarder of its own, edit two accounts'
/// keys under every policy (``ChaosKeys``) while their `run()` syncs in the background, and the
/// schedule breaks what it can: forwarders that blackhole, reset or drop the answers to commits,
/// devices killed with `kill -9` and started again from their folders (each acknowledged write
/// must still be there), devices stopped with `SIGSTOP`, clocks minutes off. Once each, at a
/// random step: an immediate restart of the server, an account switch, a copied device folder
/// started as a fifth device, a restore of the sync tables from a `pg_dump` taken earlier (same
/// epoch, devices having pushed since), and a new epoch, before or after it. Then every fault
/// stops, every replica in every folder syncs until quiet, and ``ChaosChecker`` checks it all.
///
/// In the HTTP mode (`servers`, PostgresSyncChaosSchedule+HTTP.swift), the devices sync over
/// HTTP with two `valuestore-sync-server` processes instead, each through its forwarder, and the
/// schedule also kills (`kill -9`) or terminates (SIGTERM) a server and starts it again, lets the
/// devices' first tokens expire and renews them, and has one account's token refused for another.
///
/// The seed decides the steps; the timing of each device's background sync does not repeat.
final class PostgresSyncChaosSchedule {
    let seed: UInt64
    var random: SeededRandom
    /// The test's own client, straight to the server: the one that restores, and reads what the
    /// server holds.
    let table: PostgresSyncTable
    let root: URL
    let accounts = ["alice", "bob"]
    #if Configuration && Hummingbird
    /// The two sync servers the devices talk to over HTTP, in the HTTP mode, set before it runs;
    /// `nil` when they talk to PostgreSQL themselves.
    var servers: ChaosSyncServers?
    #endif
    var devices: [SyncDeviceProcess] = []
    let model = ChaosModel()
    /// What happened, step by step, shown with the seed when a check fails.
    private(set) var log: [String] = []
    /// Problems found along the way: a local write that failed, a write lost by a kill, a read
    /// that went back.
    var problems: [String] = []
    var renewed: Set<String> = []
    private var dumpFile: URL?
    /// What kept the last healing round from being quiet.
    var notQuiet: [String] = []

    /// The steps besides the random ones, each once per schedule.
    enum Event: CaseIterable {
        case restartServer, switchAccount, copyDevice, dumpServer, restoreServer, newEpoch
        /// In the HTTP mode (PostgresSyncChaosSchedule+HTTP.swift).
        case killSyncServer, terminateSyncServer, renewTokens, foreignToken
    }

    init(seed: UInt64, table: PostgresSyncTable, root: URL) {
        self.seed = seed
        random = SeededRandom(seed: seed)
        self.table = table
        self.root = root
    }

    // MARK: Running

    /// Plays `steps` random steps with each ``Event`` among them, heals, and returns what the
    /// checks found wrong. Once `budget` has passed (devices whose syncs hang make steps slow),
    /// only the events are played. Every device process is gone when it returns or throws.
    func run(steps: Int, budget: Duration) async throws -> [String] {
        do {
            let problems = try await play(steps: steps, until: .now + budget)
            await quitAll()
            return problems
        } catch {
            await quitAll()
            throw error
        }
    }

    private func play(steps: Int, until deadline: ContinuousClock.Instant) async throws -> [String] {
        for index in 0..<4 {
            let account = pick(accounts)
            devices.append(try await newDevice(name: "d\(index)", account: account))
            say("d\(index): a new device, account \(account)")
        }
        var skipped = 0
        for (index, event) in plan(steps: steps).enumerated() {
            if let event {
                try await happen(event)
            } else if ContinuousClock.now < deadline {
                try await step()
            } else {
                skipped += 1
                continue
            }
            try await checkMonotonicReads()
            if !problems.isEmpty {
                return problems + ["(at step \(index))"]
            }
        }
        if skipped > 0 {
            say("(the time budget was spent: \(skipped) random steps skipped)")
        }
        guard let healed = try await heal() else {
            return ["the replicas did not converge within 8 rounds of sync on every replica after healing"]
                + notQuiet
        }
        var server: [String: ChaosChecker.Server] = [:]
        for account in accounts {
            server[account] = ChaosChecker.Server(
                records: try await serverRecords(of: account),
                archive: try await Self.persistently {
                    try await table.archivedConflicts(for: SyncAccount(id: account))
                })
        }
        return ChaosChecker(model: model, server: server, replicas: healed, renewed: renewed).problems()
    }

    /// Where each event happens among `steps`: the dump, steps for devices to push, then the
    /// restore and the new epoch in either order (a restore after it brings the old epoch back,
    /// another new epoch to replicas that took it); `nil` for a random step.
    private func plan(steps: Int) -> [Event?] {
        var plan = [Event?](repeating: nil, count: max(steps, 12))
        let (third, epochLast) = (plan.count / 3, chance(50))
        plan[Int.random(in: 0..<third, using: &random)] = .dumpServer
        plan[Int.random(in: third..<2 * third, using: &random)] = epochLast ? .restoreServer : .newEpoch
        plan[Int.random(in: 2 * third..<plan.count, using: &random)] = epochLast ? .newEpoch : .restoreServer
        for event in [Event.restartServer, .switchAccount, .copyDevice] + (isOverHTTP ? Self.eventsOverHTTP : []) {
            let free = plan.indices.filter { plan[$0] == nil }
            plan[pick(free)] = event
        }
        return plan
    }

    func say(_ line: String) {
        log.append(line)
    }

    func pick<T>(_ items: [T]) -> T {
        items[Int.random(in: 0..<items.count, using: &random)]
    }

    func chance(_ percent: Int) -> Bool {
        Int.random(in: 0..<100, using: &random) < percent
    }

    /// A device that is not stopped; one is continued if all are.
    private func aRunningDevice() -> SyncDeviceProcess {
        let running = devices.filter { !$0.isStopped }
        if running.isEmpty {
            let device = pick(devices)
            device.resume()
            say("\(device.name): continued (all were stopped)")
            return device
        }
        return pick(running)
    }

    // MARK: Steps

    private func step() async throws {
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<34: try await write()
        case 34..<42: try await increment()
        case 42..<44: try await readWithADefault()
        case 44..<56: try await sync(aRunningDevice())
        case 56..<70: fault()
        case 70..<76: try await killAndRestart()
        case 76..<82: stopOrContinue()
        case 82..<86: try await setAClock()
        default: try await pause()
        }
    }

    /// Saves or removes a key under one of the three value policies; a compareAndSet key is
    /// always updated.
    private func write() async throws {
        let device = aRunningDevice()
        let key = pick(ChaosKeys.valueNames)
        let id = model.nextWriteID()
        let value = "\(id)@\(device.account)"
        let command =
            key == "cas" ? "update \(key) \(value)" : chance(25) ? "remove \(key)" : "save \(key) \(value)"
        let answer = try await device.send(command)
        say("\(device.name): \(command.hasPrefix("remove") ? "\(command) (\(id))" : command)")
        guard let written = answer.written else {
            problems.append("\(device.name): the local write '\(command)' failed: \(answer.error ?? "no answer")")
            return
        }
        model.noteWrite(id: id, device: device.name, account: device.account, key: key, observed: written)
    }

    /// Adds one to the device's own count in the account's counter.
    private func increment() async throws {
        let device = aRunningDevice()
        let answer = try await device.send("merge-increment \(ChaosKeys.counter)")
        say("\(device.name): counter += 1")
        if let error = answer.error {
            problems.append("\(device.name): an increment failed: \(error)")
            return
        }
        model.noteIncrement(account: device.account)
    }

    /// Loads a key through `.default`: its default must never be written.
    private func readWithADefault() async throws {
        let device = aRunningDevice()
        let key = pick(ChaosKeys.valueNames)
        let answer = try await device.send("read \(key) \(ChaosKeys.defaultValue)")
        say("\(device.name): read \(key) with a default: \(answer.value ?? answer.error ?? "")")
        if let error = answer.error {
            problems.append("\(device.name): a read with a default failed: \(error)")
        }
    }

    /// `syncNow()` on the device, through whatever its forwarder does now.
    func sync(_ device: SyncDeviceProcess, account: String? = nil) async throws {
        let answer = try await device.send(account.map { "sync \($0)" } ?? "sync")
        let outcome = answer.error.map { "failed (\($0.prefix(120)))" } ?? "ok"
        say("\(device.name): sync\(account.map { " \($0)" } ?? "") \(outcome) [forwarder \(device.forwarder.mode)]")
    }

    /// Sets a device's forwarder: pass, blackhole, reset or drop the answers to commits (over
    /// HTTP: drop every answer, or refuse connections).
    private func fault() {
        let device = pick(devices)
        let mode: TCPForwarder.Mode
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<40: mode = .pass
        case 40..<60: mode = .blackhole
        case 60..<80: mode = .reset
        default: mode = !isOverHTTP ? .dropResponses : chance(50) ? .dropAnswers : .refuse
        }
        device.forwarder.mode = mode
        say("\(device.name): forwarder \(mode)")
    }

    /// Kills a device (`kill -9`), maybe with a request in flight, and starts it again from its
    /// folder with its forwarder blackholed, so its first dump is what the folder holds: every
    /// write it acknowledged must be there. Its new process makes the counter's store only
    /// sometimes (the counter's merge then waits).
    private func killAndRestart() async throws {
        let device = pick(devices)
        let mode = device.forwarder.mode
        device.forwarder.mode = .blackhole
        device.kill()
        try device.restart()
        let dump = try await device.dump()
        problems += ChaosChecker.durabilityProblems(of: dump, model: model)
        device.forwarder.mode = mode
        let makingCounter = chance(50)
        if makingCounter {
            _ = try await device.send("make-stores")
        }
        say(
            "\(device.name): killed and restarted (\(dump.pendingChanges) pending in its folder)"
                + (makingCounter ? "" : ", the counter's store not made"))
    }

    /// Stops a running device (two at most), or continues a stopped one.
    private func stopOrContinue() {
        let device = pick(devices)
        if device.isStopped {
            device.resume()
            say("\(device.name): continued")
        } else if devices.filter(\.isStopped).count < 2 {
            device.stop()
            say("\(device.name): stopped")
        }
    }

    /// Sets a device's clock minutes ahead or behind, or right.
    private func setAClock() async throws {
        let device = aRunningDevice()
        let offset = pick([0, 0, 90_000, -180_000, 400_000, -45_000])
        _ = try await device.send("clock \(offset)")
        say("\(device.name): clock \(offset / 1_000) s off")
    }

    /// Lets the devices' `run()` work a moment.
    private func pause() async throws {
        let milliseconds = Int.random(in: 50...300, using: &random)
        try await Task.sleep(for: .milliseconds(milliseconds))
        say("(a pause of \(milliseconds) ms)")
    }

    // MARK: Events

    private func happen(_ event: Event) async throws {
        switch event {
        case .restartServer:
            try await PostgresServer.restartImmediately()
            say("server: restarted at once (-m immediate)")
        case .switchAccount:
            let device = aRunningDevice()
            let other = accounts.first { $0 != device.account }!
            try await device.switchAccount(to: other)
            say("\(device.name): switched to account \(other)")
        case .copyDevice:
            try await copyADevice()
        case .dumpServer:
            let file = root.appending(path: "sync.dump")
            try await PostgresServer.dump(table, to: file)
            dumpFile = file
            say("server: pg_dump of the sync tables")
        case .restoreServer:
            guard let dumpFile else { return }
            try await clearFaults()
            // Devices push more after the dump: the restore loses it.
            for device in devices.prefix(2) {
                try await sync(device)
            }
            // Restored while the devices sync, as a restore into a live database is: it takes
            // the accounts table's lock first, so it waits for their requests in flight instead
            // of deadlocking with one (see PostgresServer.restore). Stopping the devices first
            // would not cover the HTTP mode, whose servers reach PostgreSQL directly, and would
            // no longer test requests that meet a restore.
            try await PostgresServer.restore(dumpFile, of: table)
            model.noteServerWentBack()
            say("server: restored from the dump (same epoch)")
        case .killSyncServer, .terminateSyncServer, .renewTokens, .foreignToken:
            try await happenOverHTTP(event)
        case .newEpoch:
            try await clearFaults()
            let account = pick(accounts)
            try await Self.persistently { try await table.startNewEpoch(for: SyncAccount(id: account)) }
            renewed.insert(account)
            model.noteServerWentBack()
            say("server: a new epoch for \(account)")
        }
    }

    /// Copies a device's folder while it is stopped, as a backup restored on another device
    /// would be, and starts a fifth device on the copy.
    private func copyADevice() async throws {
        let source = pick(devices)
        let wasStopped = source.isStopped
        if !wasStopped { source.stop() }
        let name = "d\(devices.count)"
        let folder = root.appending(path: name)
        try FileManager.default.copyItem(at: source.folder, to: folder)
        if !wasStopped { source.resume() }
        devices.append(try await newDevice(name: name, account: source.account, folder: folder))
        say("\(name): a copy of \(source.name)'s folder, account \(source.account)")
    }

    /// Every forwarder passes and every device runs: what the server's own operations wait
    /// for, since a device stopped or blackholed inside a transaction holds its locks.
    func clearFaults() async throws {
        try await renewTokensOverHTTP()
        for device in devices {
            device.forwarder.mode = .pass
            if device.isStopped { device.resume() }
        }
    }

    /// Monotonic reads, on every device that runs.
    private func checkMonotonicReads() async throws {
        for device in devices where !device.isStopped {
            let dump = try await device.dump()
            problems += model.checkMonotonicReads(
                device: device.name, account: dump.account, versions: dump.syncedVersions)
        }
    }

    private func quitAll() async {
        for device in devices {
            await device.quit()
        }
    }
}
#endif
