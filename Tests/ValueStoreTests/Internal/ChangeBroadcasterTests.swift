import Dispatch
import Testing

@testable import ValueStore

@Suite struct ChangeBroadcasterTests {
    /// A signal wakes a consumer's task, which takes that task's lock; a cancelled consumer's
    /// task holds that lock while its stream leaves the broadcaster. Signalling inside the
    /// broadcaster's lock deadlocked the two (seen in a full test run: a replica's settings file
    /// cancelling its watch while another file's change was signalled).
    /// The limit catches a deadlock, which never ends; in a full run on two cores the loop shares
    /// the threads with every other suite and takes as long as the run.
    @Test(.timeLimit(.minutes(3)))
    func consumersCancelledWhileSignalledNeverDeadlock() async {
        let broadcaster = ChangeBroadcaster()
        for _ in 0..<1_000 {
            let signals = broadcaster.signals()
            let started = AsyncStream<Void>.makeStream()
            let consumer = Task {
                started.continuation.yield()
                for await _ in signals {}
            }
            for await _ in started.stream { break }
            // Signals from another thread, racing the cancellation below.
            let signalling = DispatchGroup()
            DispatchQueue.global().async(group: signalling) {
                for _ in 0..<20 {
                    broadcaster.signalAll()
                }
            }
            consumer.cancel()
            await consumer.value
            await withCheckedContinuation { continuation in
                signalling.notify(queue: .global()) { continuation.resume() }
            }
        }
        #expect(broadcaster.subscriberCount == 0)
    }
}
