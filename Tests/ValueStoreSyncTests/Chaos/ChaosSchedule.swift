import Foundation
import Synchronization
import ValueStore
import ValueStoreSync
import ValueStoreTestSupport

/// One seeded random schedule of the chaos test: devices, each in a folder of its own, editing two
/// accounts' keys under every policy and syncing with an in-memory server through faulty
/// remotes, while devices crash (with a push in flight, too), switch accounts and are copied, and
/// the server is restored from a backup or starts a new epoch. Then every fault stops, every
/// replica syncs until quiet, and ``ChaosChecker`` checks every invariant.
///
/// Every value written is unique (`w17@alice`, see ``ChaosKeys``), and the model keeps each
/// write's causal history (the writes of that key its device had seen), so the checker can tell
/// where every write went.
final class ChaosSchedule {
    let seed: UInt64
    private var random: SeededRandom
    let server = InMemorySyncServer()
    let root: URL
    let accounts = [SyncAccount(id: "alice"), SyncAccount(id: "bob")]
    private(set) var devices: [Device] = []
    let model = ChaosModel()
    /// What happened, step by step, printed with the seed when a check fails.
    private(set) var log: [String] = []
    private var backup: InMemorySyncServer.Snapshot?
    /// The accounts that started a new epoch: their counters may have lost increments to the
    /// archive, and a write may lose to a record it had seen.
    private(set) var renewed: Set<String> = []

    final class Device {
        let name: String
        let folder: URL
        let clockOffset: TimeInterval
        var account: Int
        var replica: SyncReplica?
        var remote: FaultyRemote?

        init(name: String, folder: URL, clockOffset: TimeInterval, account: Int) {
            self.name = name
            self.folder = folder
            self.clockOffset = clockOffset
            self.account = account
        }
    }

    init(seed: UInt64, root: URL) {
        self.seed = seed
        random = SeededRandom(seed: seed)
        self.root = root
    }

    // MARK: Running

    /// Plays the schedule, heals, and returns what the checker found wrong.
    func run() async throws -> [String] {
        for _ in 0..<Int.random(in: 2...3, using: &random) {
            try await addDevice(account: Int.random(in: 0...1, using: &random))
        }
        for _ in 0..<Int.random(in: 6...16, using: &random) {
            try await step()
            var problems: [String] = []
            for device in devices {
                guard let replica = device.replica else { continue }
                problems += model.checkMonotonicReads(
                    device: device.name, account: accounts[device.account].id, versions: replica.syncedVersions)
            }
            if !problems.isEmpty { return problems }
        }
        guard let healed = try await heal() else {
            return ["the replicas did not converge within 8 rounds of syncNow() on every replica after healing"]
                + notQuiet
        }
        var replicas: [SyncReplicaDump] = []
        for replica in healed {
            replicas.append(try await SyncReplicaDump(device: replica.device, replica: replica.replica))
        }
        var server: [String: ChaosChecker.Server] = [:]
        for account in accounts {
            server[account.id] = ChaosChecker.Server(
                records: self.server.state(of: account)?.records.mapValues(\.record) ?? [:],
                archive: try await self.server.archivedConflicts(for: account))
        }
        return ChaosChecker(model: model, server: server, replicas: replicas, renewed: renewed).problems()
    }

    private func say(_ line: String) {
        log.append(line)
    }

    private func pick<T>(_ items: [T]) -> T {
        items[Int.random(in: 0..<items.count, using: &random)]
    }

    private func chance(_ percent: Int) -> Bool {
        Int.random(in: 0..<100, using: &random) < percent
    }

    // MARK: Devices

    private func addDevice(account: Int, copying source: Device? = nil) async throws {
        let name = "d\(devices.count)"
        let folder = root.appending(path: name, directoryHint: .isDirectory)
        if let source {
            try FileManager.default.copyItem(at: source.folder, to: folder)
        }
        let offset = pick([0, 0, 0, 90, -180, 400, -45] as [TimeInterval])
        let device = Device(name: name, folder: folder, clockOffset: offset, account: account)
        devices.append(device)
        try await open(device, makingCounter: true)
        say(
            source.map {
                "\(name): a copy of \($0.name)'s folder, account \(accounts[account].id), clock \(Int(offset)) s"
            }
                ?? "\(name): a new device, account \(accounts[account].id), clock \(Int(offset)) s off")
    }

    func options(for device: Device) -> SyncOptions {
        var options = SyncOptions()
        options.fileOptions = .cache
        // Small batches and pages, so a few changes make several of each.
        options.pushBatchSize = 3
        options.pullPageSize = 3
        let offset = device.clockOffset
        if offset != 0 {
            options.clock = SyncClock { Date().addingTimeInterval(offset) }
        }
        return options
    }

    /// Opens a replica of the device's account over its folder, with a faulty remote that passes
    /// every call until a step says otherwise; makes the stores of every key, the counter's only
    /// when `makingCounter` (otherwise its merge waits).
    private func open(_ device: Device, makingCounter: Bool) async throws {
        let account = accounts[device.account]
        let name = device.name
        let remote = FaultyRemote(server.remote(for: account))
        let replica = try SyncReplica(
            directory: device.folder, account: account, remote: remote.remote, options: options(for: device))
        device.replica = replica
        device.remote = remote
        if makingCounter {
            _ = ChaosKeys.counter(in: replica)
        }
        model.noteOpened(device: name, account: account.id, id: try await replica.id)
    }

    /// A device with an open replica.
    private func anOpenDevice() -> (Device, SyncReplica) {
        let open = devices.filter { $0.replica != nil }
        let device = pick(open)
        return (device, device.replica!)
    }

    // MARK: Steps

    private func step() async throws {
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<32: try await write()
        case 32..<42: try await increment()
        case 42..<44: try await readWithADefault()
        case 44..<70: try await sync()
        case 70..<77: try await crash()
        case 77..<81: try await crashWithAPushInFlight()
        case 81..<86: try await switchAccount()
        case 86..<89: try await copyADevice()
        case 89..<94: takeABackup()
        case 94..<98: restoreTheBackup()
        default: try await startANewEpoch()
        }
    }

    /// Saves or removes a key under one of the three value policies.
    private func write() async throws {
        let (device, replica) = anOpenDevice()
        let account = accounts[device.account].id
        let key = pick(ChaosKeys.valueNames)
        let store = ChaosKeys.store(key, in: replica)
        let id = model.nextWriteID()
        let value = "\(id)@\(account)"
        let removing = key != "cas" && chance(25)
        let observed = try await replica.observing(key) {
            if removing {
                try await store.remove()
            } else if key == "cas" {
                try await store.optional().update { $0 = value }
            } else {
                try await store.save(value)
            }
        }
        if removing {
            say("\(device.name): remove \(key) (\(id))")
        } else {
            say("\(device.name): \(key == "cas" ? "update" : "save") \(key) = \(value)")
        }
        model.noteWrite(id: id, device: device.name, account: account, key: key, observed: observed)
    }

    /// Adds one to the device's own count in the account's counter.
    private func increment() async throws {
        let (device, replica) = anOpenDevice()
        let account = accounts[device.account].id
        try await ChaosKeys.increment(device.name, in: replica)
        model.noteIncrement(account: account)
        say("\(device.name): counter += 1")
    }

    /// Loads a key through `.default`: its default must never be written.
    private func readWithADefault() async throws {
        let (device, replica) = anOpenDevice()
        let key = pick(ChaosKeys.valueNames)
        let value = try await ChaosKeys.store(key, in: replica).default(ChaosKeys.defaultValue).load()
        say("\(device.name): read \(key) with a default: \(value)")
    }

    /// `syncNow()` on a device, each request dropped, answered into the void, repeated or passed
    /// at random.
    private func sync() async throws {
        let (device, replica) = anOpenDevice()
        let faults = Mutex(SeededRandom(seed: random.next()))
        let faulty = chance(60)
        if faulty {
            device.remote?.faults { _ in
                faults.withLock { random in
                    switch Int.random(in: 0..<100, using: &random) {
                    case 0..<12: .dropRequest
                    case 12..<24: .dropAnswer
                    case 24..<36: .duplicate
                    default: .pass
                    }
                }
            }
        }
        let before = device.remote?.log.count ?? 0
        let outcome: String
        do {
            try await replica.syncNow()
            outcome = "ok"
        } catch {
            outcome = "failed (\(error))"
        }
        device.remote?.always(.pass)
        let calls = device.remote?.log.dropFirst(before).joined(separator: ", ") ?? ""
        say("\(device.name): syncNow \(outcome) [\(calls)]")
    }

    /// Drops the device's replica, as a crash would, and opens its folder again; sometimes the
    /// new process has not made the counter's store yet.
    private func crash() async throws {
        let (device, _) = anOpenDevice()
        device.replica = nil
        device.remote = nil
        let makingCounter = chance(50)
        try await open(device, makingCounter: makingCounter)
        say("\(device.name): crashed and reopened\(makingCounter ? "" : ", the counter's store not made")")
    }

    /// Starts a sync whose first push reaches the server and never comes back, drops the
    /// replica while the push is in flight, opens the folder again, then lets the old call fail.
    private func crashWithAPushInFlight() async throws {
        let (device, replica) = anOpenDevice()
        guard let remote = device.remote else { return }
        let held = Mutex(false)
        remote.faults { call in
            held.withLock { held in
                guard call == .push, !held else { return .pass }
                held = true
                return .hold
            }
        }
        let syncing = Task {
            _ = try? await replica.syncNow()
            remote.finished()
        }
        await remote.waitUntilHolding()
        device.replica = nil
        device.remote = nil
        try await open(device, makingCounter: true)
        remote.release()
        await syncing.value
        say("\(device.name): crashed with a push in flight [\(remote.log.joined(separator: ", "))], reopened")
    }

    /// Closes the device's replica and opens one of the other account in the same folder.
    private func switchAccount() async throws {
        let (device, _) = anOpenDevice()
        device.replica = nil
        device.remote = nil
        device.account = 1 - device.account
        try await open(device, makingCounter: true)
        say("\(device.name): switched to account \(accounts[device.account].id)")
    }

    /// Copies a device's folder, as a backup restored on a second device would, and opens it.
    private func copyADevice() async throws {
        guard devices.count < 5 else { return }
        let (device, _) = anOpenDevice()
        try await addDevice(account: device.account, copying: device)
    }

    private func takeABackup() {
        backup = server.snapshot()
        say("server: backup taken")
    }

    private func restoreTheBackup() {
        guard let backup else { return }
        server.restore(backup)
        model.noteServerWentBack()
        say("server: restored from the backup (same epoch)")
    }

    private func startANewEpoch() async throws {
        guard renewed.isEmpty else { return }
        let account = pick(accounts)
        try await server.startNewEpoch(for: account)
        renewed.insert(account.id)
        model.noteServerWentBack()
        say("server: a new epoch for \(account.id)")
    }

    // MARK: Healing

    /// Stops every fault, opens every replica in every folder (every device, every account it
    /// ever had) with every store made, and syncs them round after round until all agree with
    /// the server and nothing is pending; `nil` if that takes more than 8 rounds.
    func heal() async throws -> [Healed]? {
        var healed: [Healed] = []
        for device in devices {
            device.replica = nil
            device.remote = nil
            for account in accounts {
                let folder = device.folder.appending(path: account.id, directoryHint: .isDirectory)
                guard FileManager.default.fileExists(atPath: folder.path(percentEncoded: false)) else { continue }
                let name = device.name
                let remote = FaultyRemote(server.remote(for: account))
                let replica = try SyncReplica(
                    directory: device.folder, account: account, remote: remote.remote, options: options(for: device))
                _ = ChaosKeys.counter(in: replica)
                model.noteOpened(device: name, account: account.id, id: try await replica.id)
                healed.append(Healed(device: device.name, account: account.id, replica: replica, remote: remote))
            }
        }
        say("healing: \(healed.count) replicas")
        for round in 1...8 {
            for replica in healed {
                do {
                    try await replica.replica.syncNow()
                } catch {
                    say("healing round \(round): \(replica.device)/\(replica.account) failed: \(error)")
                }
            }
            if try await isQuiet(healed) {
                say("healed after \(round) rounds")
                return healed
            }
        }
        return nil
    }

    struct Healed {
        let device: String
        let account: String
        let replica: SyncReplica
        let remote: FaultyRemote
    }

    /// What kept the last healing round from being quiet.
    private var notQuiet: [String] = []

    /// Whether every replica agrees with the server and has nothing pending.
    private func isQuiet(_ healed: [Healed]) async throws -> Bool {
        notQuiet = []
        for replica in healed {
            let dump = try await SyncReplicaDump(device: replica.device, replica: replica.replica)
            let server = self.server.state(of: SyncAccount(id: replica.account))?.records.mapValues(\.record) ?? [:]
            let unsettled = dump.unsettled(against: server)
            notQuiet += unsettled
            if dump.pendingChanges != 0 {
                notQuiet.append(
                    "  its requests while healing: \(replica.remote.log.suffix(12).joined(separator: ", "))")
            }
        }
        return notQuiet.isEmpty
    }
}
