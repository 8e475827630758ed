#if Hummingbird
import HTTPTypes
package import Hummingbird
import NIOCore
package import ValueStoreSyncHTTP

extension Response {
    /// A service's answer as a Hummingbird response: its status, its headers, and its body at once
    /// or, for a stream (server-sent events), written chunk by chunk as the service sends each,
    /// every chunk flushed, until the service ends the stream or the client goes away.
    package init(_ answer: SyncHTTPResponse) {
        var headers = HTTPFields()
        for (name, value) in answer.headers.sorted(by: { $0.key < $1.key }) {
            if let name = HTTPField.Name(name) {
                headers[name] = value
            }
        }
        let body: ResponseBody
        switch answer.body {
        case .bytes(let data):
            body = ResponseBody(byteBuffer: ByteBuffer(bytes: data))
        case .stream(let chunks):
            body = ResponseBody { writer in
                for await chunk in chunks {
                    try await writer.write(ByteBuffer(bytes: chunk))
                }
                try await writer.finish(nil)
            }
        }
        self.init(status: HTTPResponse.Status(code: answer.status), headers: headers, body: body)
    }
}
#endif
