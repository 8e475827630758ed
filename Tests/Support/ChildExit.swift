package import Foundation

/// Waits for `process` to exit and returns its exit status, reaping it here and holding no
/// thread while it waits: for commands that run long, and for children whose own children live
/// on (a server), which Foundation does not always reap.
///
/// ```swift
/// #expect(await exitStatus(of: process) == 0)
/// ```
package func exitStatus(of process: Process) async -> Int32 {
    let pid = process.processIdentifier
    var pause = Duration.milliseconds(1)
    while true {
        var status: Int32 = 0
        let reaped = waitpid(pid, &status, WNOHANG)
        if reaped == pid {
            return exitStatus(fromWaitStatus: status)
        }
        if reaped == -1 && errno != EINTR {
            // Foundation reaped it first, and has its status or is about to.
            while process.isRunning {
                try? await Task.sleep(for: .milliseconds(1))
            }
            return process.terminationStatus
        }
        try? await Task.sleep(for: pause)
        pause = min(pause * 2, .milliseconds(20))
    }
}

/// Waits for `process` to exit, blocking this thread, and returns its exit status. Reaps the
/// child itself, so it never depends on Foundation noticing the exit (`waitUntilExit()` spins
/// the calling thread's run loop until Foundation's own thread has reaped the child).
///
/// ```swift
/// #expect(exitStatusBlockingThisThread(of: process) == 0)
/// ```
package func exitStatusBlockingThisThread(of process: Process) -> Int32 {
    var status: Int32 = 0
    while true {
        let reaped = waitpid(process.processIdentifier, &status, 0)
        if reaped == process.processIdentifier {
            return exitStatus(fromWaitStatus: status)
        }
        if errno != EINTR {
            // Foundation reaped it first, and has its status or is about to.
            while process.isRunning {
                usleep(1_000)
            }
            return process.terminationStatus
        }
    }
}

/// A signal's number for a killed child, its exit code otherwise, as Foundation reports them.
private func exitStatus(fromWaitStatus status: Int32) -> Int32 {
    let signal = status & 0x7F
    return signal == 0 ? (status >> 8) & 0xFF : signal
}
