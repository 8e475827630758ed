#if Hummingbird
public import Hummingbird
import ValueStore
import ValueStoreSync
public import ValueStoreSyncHTTP

extension SyncHTTPService {
    /// The service's routes, for a Hummingbird app to mount where it likes.
    ///
    /// Under the mount, `POST v1/push`, `POST v1/pull` and `GET v1/pokes` (and every other path,
    /// which the service answers 404) first authenticate the request through `authentication`,
    /// then hand it to ``/ValueStoreSyncHTTP/SyncHTTPService/respond(to:account:)``, which checks
    /// limits and the account and answers through the account's remote. The app owns the server:
    /// its middleware, its TLS, its lifecycle.
    ///
    /// ```swift
    /// let router = Router()
    /// router.addRoutes(
    ///     service.routes(authentication: .bearer { token in try await sessions.account(for: token) }),
    ///     atPath: "/sync")
    /// let app = Application(router: router)
    /// ```
    ///
    /// A request without credentials, or with credentials `authentication` refuses, is answered
    /// 401 with `WWW-Authenticate` naming its challenge; one whose credentials cannot be checked
    /// now, 503. Poke streams are written chunk by chunk as the service sends them.
    ///
    /// - Parameter authentication: Who is asking; see ``SyncAuthentication``.
    /// - Returns: The routes, to mount with `addRoutes(_:atPath:)`.
    public func routes<Context: RequestContext>(
        authentication: SyncAuthentication<Context>
    ) -> RouteCollection<Context> {
        let routes = RouteCollection(context: Context.self)
        let service = self
        for method in [HTTPRequest.Method.get, .post, .put, .patch, .delete] {
            routes.on("**", method: method) { request, context in
                await service.response(to: request, context: context, authentication: authentication)
            }
        }
        return routes
    }

    /// Authenticates `request` and answers it.
    private func response<Context: RequestContext>(
        to request: Request,
        context: Context,
        authentication: SyncAuthentication<Context>
    ) async -> Response {
        let account: SyncAccount?
        do {
            account = try await authentication.account(request, context)
        } catch {
            // The error's text may hold the token: the answer never carries it.
            let problem = SyncHTTPProblem(
                status: 503, code: .unavailable, detail: "the server cannot check credentials now; try again")
            return Response(problem.response)
        }
        var answer = await respond(to: SyncHTTPRequest(request, context: context), account: account)
        if answer.status == 401 {
            answer.headers["www-authenticate"] = authentication.challenge
        }
        return Response(answer)
    }
}
#endif
