import Foundation
import ValueStore
import ValueStoreSync

extension SyncHTTPService {
    /// Answers a push of `account`: a change whose value is over
    /// ``SyncHTTPLimits/maximumValueBytes``, or whose key no server can keep (over 1,024 bytes,
    /// or with U+0000), is rejected here, with its key and stamp, and the others go to the
    /// account's remote; the answer has an outcome for every change, in the request's order. So
    /// one such change never fails the push of the others, again at every retry.
    ///
    /// A refusal of the whole request (``SyncPushResponse/refusal``) is answered as the remote
    /// gave it, with no outcomes: the replica settles the refusal first and pushes again, and the
    /// oversized changes are rejected then.
    func push(_ request: SyncPushRequest, of account: SyncAccount) async throws -> SyncPushResponse {
        try await request.pushed(refusing: refusal(of:), store: "sync over HTTP") { forwarded in
            try await remote(account).push(forwarded)
        }
    }

    /// Why the service rejects `change` without sending it on, or `nil`.
    private func refusal(of change: SyncRecord) -> String? {
        let size = change.value?.count ?? 0
        if size > limits.maximumValueBytes {
            return "the value is \(size) bytes, over the server's limit of \(limits.maximumValueBytes)"
        }
        return SyncKey.unstorable(change.key)
    }
}
