import Foundation
import Testing

@testable import ValueStoreSyncHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the URL session transports' sessions keep: the default one no cookies and no cache; one
/// made with a configuration, what that configuration says.
@Suite struct URLSessionTransportTests {
    /// The default transport's sessions neither store, accept nor send cookies, and have no
    /// cache.
    @Test func theDefaultSessionsKeepNoCookiesAndNoCache() {
        for configuration in URLSessions().all.map(\.configuration) {
            #expect(configuration.httpCookieStorage == nil)
            #expect(!configuration.httpShouldSetCookies)
            #expect(configuration.httpCookieAcceptPolicy == .never)
            #expect(configuration.urlCache == nil)
            #expect(configuration.requestCachePolicy == .reloadIgnoringLocalCacheData)
        }
    }

    /// A configuration an app gives is used as it is, cookies and cache included: a server may
    /// authenticate with a cookie.
    @Test func aGivenConfigurationKeepsItsCookiesAndCache() {
        let given = URLSessionConfiguration.ephemeral
        given.httpCookieAcceptPolicy = .always
        given.requestCachePolicy = .returnCacheDataElseLoad
        given.timeoutIntervalForRequest = 12
        for configuration in URLSessions(given).all.map(\.configuration) {
            #expect(configuration.httpCookieStorage != nil)
            #expect(configuration.httpShouldSetCookies)
            #expect(configuration.httpCookieAcceptPolicy == .always)
            #expect(configuration.requestCachePolicy == .returnCacheDataElseLoad)
            #expect(configuration.timeoutIntervalForRequest == 12)
        }
    }
}
