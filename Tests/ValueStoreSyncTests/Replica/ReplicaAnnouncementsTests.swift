import Dispatch
import Testing

@testable import ValueStoreSync

@Suite(.timeLimit(.minutes(3))) struct ReplicaAnnouncementsTests {
    /// A status told inside the replica's lock deadlocked with a status stream's consumer
    /// cancelled at the same moment: the yield waits for the consumer task's lock, which its
    /// cancellation holds while the stream leaves through the replica's lock.
    /// The limit catches a deadlock, which never ends; in a full run on two cores the loop shares
    /// the threads with every other suite and takes as long as the run.
    @Test(.timeLimit(.minutes(3)))
    func streamsCancelledWhileTheStatusChangesNeverDeadlock() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            try await phone.syncNow()
            for round in 0..<1_000 {
                let started = AsyncStream<Void>.makeStream()
                let statuses = phone.statusUpdates()
                let conflicts = phone.conflicts()
                let consumer = Task {
                    started.continuation.yield()
                    if round.isMultiple(of: 2) {
                        for await _ in statuses {}
                    } else {
                        for await _ in conflicts {}
                    }
                }
                for await _ in started.stream { break }
                // Status changes from another thread, racing the cancellation below.
                let changing = DispatchGroup()
                DispatchQueue.global().async(group: changing) {
                    for turn in 0..<20 {
                        phone.enter(turn.isMultiple(of: 2) ? .pushing : .idle)
                    }
                }
                consumer.cancel()
                await consumer.value
                await withCheckedContinuation { continuation in
                    changing.notify(queue: .global()) { continuation.resume() }
                }
            }
            #expect(phone.status.phase == .idle)
        }
    }
}
