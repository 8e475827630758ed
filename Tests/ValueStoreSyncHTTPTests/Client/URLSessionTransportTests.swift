import Foundation
import Testing

@testable import ValueStoreSyncHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the URL session transport's sessions never keep: cookies, a cache.
@Suite struct URLSessionTransportTests {
    /// Whatever the configuration an app gives says, the sessions neither store, accept nor send
    /// cookies, and have no cache; the app's configuration is copied, never changed, and the
    /// rest of it is kept.
    @Test func theSessionsKeepNoCookiesAndNoCacheWhateverTheirConfigurationSays() {
        let given = URLSessionConfiguration.ephemeral
        given.httpCookieAcceptPolicy = .always
        given.requestCachePolicy = .returnCacheDataElseLoad
        given.timeoutIntervalForRequest = 12
        let sessions = URLSessions(given)
        var used = [sessions.requestSession.configuration]
        #if canImport(FoundationNetworking)
        used.append(sessions.streamSession.configuration)
        #endif
        for configuration in used {
            #expect(configuration.httpCookieStorage == nil)
            #expect(!configuration.httpShouldSetCookies)
            #expect(configuration.httpCookieAcceptPolicy == .never)
            #expect(configuration.urlCache == nil)
            #expect(configuration.requestCachePolicy == .reloadIgnoringLocalCacheData)
            #expect(configuration.timeoutIntervalForRequest == 12)
        }
        #expect(given.httpShouldSetCookies)
        #expect(given.httpCookieAcceptPolicy == .always)
        #expect(given.urlCache != nil)
    }
}
