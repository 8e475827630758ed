import Foundation
import Synchronization
import Testing
import ValueStore
import ValueStoreSync

/// Answers a replica must not take: an earlier push's answer handed back again (a cache, a
/// retrying proxy), another account's page; and answers from servers that predate the names.
@Suite struct AnswerCheckTests {
    @Test func aStalePushAnswerSettlesNothing() async throws {
        try await SyncSandbox.with { sandbox in
            let inner = sandbox.server.remote(for: sandbox.account)
            let earlier = Mutex<SyncPushResponse?>(nil)
            let replaying = Atomic(false)
            let remote = SyncRemote(
                label: "replaying",
                push: { request in
                    if replaying.load(ordering: .relaxed), let answer = earlier.withLock({ $0 }) {
                        return answer  // the request never reaches the server
                    }
                    let answer = try await inner.push(request)
                    earlier.withLock { $0 = answer }
                    return answer
                },
                pull: { try await inner.pull($0) })
            let phone = try sandbox.replica("phone", remote: remote)
            let theme = phone.store("theme", as: String.self)
            try await theme.save("first")
            try await phone.syncNow()
            replaying.store(true, ordering: .relaxed)
            try await theme.save("second")
            let error = await #expect(throws: ValueStoreError.self) { try await phone.syncNow() }
            #expect(error?.code == .outcomeUnknown)
            #expect(phone.status.pendingChanges == 1)
            #expect(sandbox.server.state(of: sandbox.account)?.records["theme"]?.record.value == json("first"))
            replaying.store(false, ordering: .relaxed)
            try await phone.syncNow()
            #expect(phone.status.pendingChanges == 0)
            #expect(sandbox.server.state(of: sandbox.account)?.records["theme"]?.record.value == json("second"))
        }
    }

    @Test func anotherAccountsPageAppliesNothing() async throws {
        try await SyncSandbox.with { sandbox in
            let other = SyncAccount(id: "user-7")
            let elsewhere = try sandbox.replica("tablet", account: other)
            try await elsewhere.store("theme", as: String.self).save("the other account's")
            try await elsewhere.syncNow()
            let inner = sandbox.server.remote(for: sandbox.account)
            let misrouted = sandbox.server.remote(for: other)
            let remote = SyncRemote(
                label: "misrouting",
                push: { try await inner.push($0) },
                pull: { request in
                    var routed = request
                    routed.account = other.id
                    return try await misrouted.pull(routed)
                })
            let phone = try sandbox.replica("phone", remote: remote)
            let error = await #expect(throws: ValueStoreError.self) { try await phone.syncNow() }
            #expect(error?.code == .outcomeUnknown)
            await #expect(throws: ValueStoreError.notFound) { try await phone.store("theme", as: String.self).load() }
        }
    }

    /// A server that predates the names: its outcomes are matched by position, as before.
    @Test func anAnswerWithoutNamesIsMatchedByPosition() async throws {
        try await SyncSandbox.with { sandbox in
            let inner = sandbox.server.remote(for: sandbox.account)
            let older = SyncRemote(
                label: "older server",
                push: { request in
                    var answer = try await inner.push(request)
                    answer.settled = nil
                    return answer
                },
                pull: { request in
                    var page = try await inner.pull(request)
                    page.account = nil
                    return page
                })
            let phone = try sandbox.replica("phone", remote: older)
            let laptop = try sandbox.replica("laptop", remote: older)
            try await phone.store("theme", as: String.self).save("dark")
            try await phone.store("font", as: Int.self).save(14)
            try await syncInTurn(phone, laptop)
            #expect(phone.status.pendingChanges == 0)
            #expect(try await laptop.store("theme", as: String.self).load() == "dark")
            #expect(try await laptop.store("font", as: Int.self).load() == 14)
        }
    }
}
