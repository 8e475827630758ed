#if PostgreSQL
import Foundation
import ValueStorePostgres
import ValueStoreSync
import ValueStoreTestSupport

// MARK: The HTTP mode

extension PostgresSyncChaosSchedule {
    /// A new device named `name` on `folder` (its own, by default), syncing `account` with the
    /// PostgreSQL tables, or over HTTP with one of the two servers, the devices taking turns.
    func newDevice(name: String, account: String, folder: URL? = nil) async throws -> SyncDeviceProcess {
        let folder = folder ?? root.appending(path: name)
        #if Configuration && Hummingbird
        if let servers {
            let index = devices.count % 2
            let device = try SyncDeviceProcess(
                name: name, folder: folder, account: account, serverPort: servers.port(index),
                tokens: try await servers.tokens(of: name))
            servers.attach(device.forwarder, to: index)
            return device
        }
        #endif
        return try SyncDeviceProcess(name: name, folder: folder, account: account, table: table.name)
    }

    /// Whether the devices sync over HTTP.
    var isOverHTTP: Bool {
        #if Configuration && Hummingbird
        servers != nil
        #else
        false
        #endif
    }

    /// Renews every token for ten minutes in the HTTP mode, as healing needs.
    func renewTokensOverHTTP() async throws {
        #if Configuration && Hummingbird
        try await servers?.renewTokens(lifetime: 600)
        #endif
    }

    /// What happens once each in the HTTP mode.
    static let eventsOverHTTP: [Event] = [.killSyncServer, .terminateSyncServer, .renewTokens, .foreignToken]

    /// Kills (`kill -9`) or terminates (SIGTERM, which must end in a clean exit) one of the
    /// servers and starts it again behind the same forwarders; renews every token, the first
    /// ones having expired or about to; or has a server refuse one account's token for the other
    /// account, reading and writing (403, and nothing of the account in the answer).
    func happenOverHTTP(_ event: Event) async throws {
        #if Configuration && Hummingbird
        guard let servers else { return }
        let index = Int.random(in: 0..<2, using: &random)
        switch event {
        case .killSyncServer, .terminateSyncServer:
            let killing = event == .killSyncServer
            let status = try await servers.restart(index, killing: killing)
            if !killing && status != 0 {
                problems.append("sync server \(index) exited with status \(status) after SIGTERM")
            }
            say("sync server \(index): \(killing ? "killed (kill -9)" : "terminated (exit \(status))"), started again")
        case .renewTokens:
            try await servers.renewTokens(lifetime: 600)
            say("tokens: renewed (the first ones expire \(Self.firstTokensLifetime) s after the start)")
        case .foreignToken:
            let account = pick(accounts)
            let owner = accounts.first { $0 != account }!
            problems += try await servers.foreignTokenProblems(server: index, account: account, owner: owner)
            say("sync server \(index): \(owner)'s token refused for \(account)'s pull and push")
        default:
            break
        }
        #endif
    }

    /// How long the devices' first tokens are good for: they expire mid-schedule, and each
    /// device reads the renewed ones when a server refuses its expired one.
    static let firstTokensLifetime: TimeInterval = 8
}
#endif
