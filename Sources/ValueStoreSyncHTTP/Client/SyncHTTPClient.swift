import Foundation
import ValueStore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The requests of one HTTP remote: the URL checked before anything is sent, a bearer token
/// renewed once on a 401, a bound on each request, 429s waited out, redirects refused, and every
/// other answer but a 2xx turned into a ``ValueStoreError`` with the problem's code.
struct SyncHTTPClient: Sendable {
    let url: URL
    let account: String
    let options: SyncHTTPOptions
    let tokens: SyncHTTPTokens

    var label: String { "sync server at \(url.absoluteString)" }

    /// Whether a failure may come after the server applied the request: a push's then is
    /// ``ValueStore/ValueStoreError/Code/outcomeUnknown``, anything else's
    /// ``ValueStore/ValueStoreError/Code/unavailable``.
    enum Effect {
        case mayApply
        case readOnly
    }

    /// A request the server refused as too large (413), which a push splits.
    struct TooLarge: Error {
        var error: ValueStoreError
    }

    /// `POST`s `body` as JSON to `route` and returns the answer's body.
    ///
    /// - Throws: ``TooLarge`` for a 413 when the caller `splits` what it sends; a
    ///   ``ValueStoreError`` for anything else but a 2xx.
    func post(_ body: Data, to route: String, effect: Effect, splits: Bool = false) async throws -> Data {
        var request = URLRequest(url: url.appendingPathComponent(route))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = body
        return try await send(request, effect: effect, within: options.requestTimeout, splits: splits)
    }

    /// A request for `route` with the account and `query` as query items.
    func get(_ route: String, query: [URLQueryItem] = []) -> URLRequest {
        var components = URLComponents(url: url.appendingPathComponent(route), resolvingAgainstBaseURL: false)
        components?.queryItems = [URLQueryItem(name: "account", value: account)] + query
        var request = URLRequest(url: components?.url ?? url.appendingPathComponent(route))
        request.httpMethod = "GET"
        return request
    }

    /// Sends `request` with the token and returns the body of its 2xx answer; one whose answer
    /// `waits` (a long poll) goes the way of a stream, which on Linux starts on a warm connection
    /// (see ``SyncHTTPTransport/urlSession(_:)``).
    func send(
        _ request: URLRequest, effect: Effect, within limit: Duration, waits: Bool = false, splits: Bool = false
    ) async throws -> Data {
        try checkURL()
        var rateLimited = 0
        while true {
            let (data, head) = try await authorized(request) { request in
                try await bounded(request, effect: effect, within: limit, waits: waits)
            }
            if head.statusCode == 429 && rateLimited < options.timings.rateLimitedAttempts {
                rateLimited += 1
                try await Task.sleep(for: retryAfter(head))
                continue
            }
            try check(head, data, splits: splits)
            return data
        }
    }

    /// Runs `attempt` with the token, and once more with a renewed one when the server refuses
    /// it (401); the caller takes a second 401 for an answer. A token the source does not give
    /// within the request timeout fails the request as
    /// ``ValueStore/ValueStoreError/Code/unavailable``, unsent.
    func authorized<Answer>(
        _ request: URLRequest,
        _ attempt: (_ request: URLRequest) async throws -> (Answer, HTTPURLResponse)
    ) async throws -> (Answer, HTTPURLResponse) {
        do {
            let token = try await tokens.current(within: options.requestTimeout)
            let first = try await attempt(request.bearing(token))
            guard first.1.statusCode == 401 else { return first }
            return try await attempt(
                request.bearing(try await tokens.renewed(after: token, within: options.requestTimeout)))
        } catch is SyncHTTPTokens.Late {
            throw ValueStoreError(
                .unavailable, store: label,
                reason: "the token source did not give a token within \(options.requestTimeout); nothing was sent")
        }
    }

    /// Throws the error an answer that is not a 2xx stands for; a 413 as ``TooLarge`` when the
    /// caller `splits` what it sends.
    func check(_ head: HTTPURLResponse, _ data: Data, splits: Bool) throws {
        let status = head.statusCode
        guard !(200..<300).contains(status) else { return }
        if (300..<400).contains(status) {
            throw ValueStoreError(
                .unavailable, store: label,
                reason: "the server answered \(status), redirecting to "
                    + "\(head.value(forHTTPHeaderField: "Location") ?? "nowhere"); a sync remote never follows a "
                    + "redirect, so its token never reaches another host: give it the final URL")
        }
        let problem = try? JSONDecoder().decode(SyncHTTPProblem.self, from: data)
        let error =
            problem?.error(from: label)
            ?? ValueStoreError(
                Self.code(of: status), store: label,
                reason: "the server answered \(status) \(HTTPURLResponse.localizedString(forStatusCode: status))")
        if status == 413 && splits { throw TooLarge(error: error) }
        throw error
    }

    /// The code of an answer without a problem document (a proxy's).
    private static func code(of status: Int) -> ValueStoreError.Code {
        switch status {
        case 401: .unauthorized
        case 403: .forbidden
        case 404: .notFound
        case 413: .invalidConfiguration
        case 429: .unavailable
        case 400..<500: .decodingFailed
        case 504: .outcomeUnknown
        default: .unavailable
        }
    }

    /// The wait a 429 asks for (`Retry-After` in seconds), at most the remote's cap.
    private func retryAfter(_ head: HTTPURLResponse) -> Duration {
        let seconds = head.value(forHTTPHeaderField: "Retry-After").flatMap {
            Int($0.trimmingCharacters(in: .whitespaces))
        }
        return min(.seconds(max(0, seconds ?? 1)), options.timings.maximumRetryAfter)
    }

    /// Sends `request` through the transport, failing after `limit`; a failure of the transport
    /// (or the limit) is `outcomeUnknown` for a request that may apply once it was sent, and
    /// `unavailable` for one that was surely not sent or changes nothing.
    private func bounded(
        _ request: URLRequest,
        effect: Effect,
        within limit: Duration,
        waits: Bool
    ) async throws -> (Data, HTTPURLResponse) {
        let transport = options.transport
        do {
            return try await withThrowingTaskGroup(of: (Data, HTTPURLResponse)?.self) { group in
                group.addTask {
                    guard waits else { return try await transport.send(request) }
                    let (head, chunks) = try await transport.stream(request)
                    return (try await chunks.collected(), head)
                }
                group.addTask {
                    try await Task.sleep(for: limit)
                    return nil
                }
                defer { group.cancelAll() }
                guard let answer = try await group.next() ?? nil else {
                    throw failure(
                        effect: effect, sent: true, reason: "the server did not answer within \(limit)")
                }
                return answer
            }
        } catch let error as ValueStoreError {
            throw error
        } catch {
            try Task.checkCancellation()
            let unsent = [.cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet]
                .contains((error as? URLError)?.code)
            throw failure(effect: effect, sent: !unsent, reason: "the request failed: \(error)")
        }
    }

    private func failure(effect: Effect, sent: Bool, reason: String) -> ValueStoreError {
        guard effect == .mayApply && sent else {
            return ValueStoreError(.unavailable, store: label, reason: reason)
        }
        return ValueStoreError(
            .outcomeUnknown, store: label,
            reason: "\(reason), after the push may have reached it; it is safe to push again")
    }

    /// Throws ``ValueStore/ValueStoreError/Code/invalidConfiguration`` for a URL a token must
    /// not go to: not `http` or `https`, or plain `http` to another machine without
    /// ``SyncHTTPOptions/allowsInsecureHTTP``.
    func checkURL() throws {
        let scheme = url.scheme?.lowercased()
        guard scheme == "https" || scheme == "http" else {
            throw ValueStoreError(
                .invalidConfiguration, store: label, reason: "a sync server's URL is http:// or https://")
        }
        guard scheme == "http", !options.allowsInsecureHTTP, !Self.isLoopback(url.host ?? "") else { return }
        throw ValueStoreError(
            .invalidConfiguration, store: label,
            reason: "plain http:// to a host other than this machine would send the token in clear text; "
                + "use https://, or set SyncHTTPOptions.allowsInsecureHTTP for a network you trust")
    }

    /// Whether `host` is this machine: `localhost`, `::1`, or an IPv4 address of `127.0.0.0/8`
    /// written as four decimal numbers (so `127.example.com` and `127.0.0.1.example.com`, names
    /// of other machines, are not).
    static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if host == "localhost" || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts.first == "127" else { return false }
        return parts.allSatisfy { part in
            (1...3).contains(part.count) && part.utf8.allSatisfy { (0x30...0x39).contains($0) }
                && (Int(part) ?? 256) <= 255
        }
    }
}

extension URLRequest {
    /// The request with `Authorization: Bearer token`.
    fileprivate func bearing(_ token: String) -> URLRequest {
        var request = self
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        return request
    }
}
