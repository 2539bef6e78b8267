@testable import CurlXHR
import CurlXHRClient
import Foundation
import Testing

/// Hermod's offline cache: a client whose calls are stored by the process's cache, then
/// answered from it without the network (`cachePolicy = [.readForced]`).
@Suite(.ownThreads) struct ClientCacheTests {
    /// Notes whether each response came from the cache.
    final class Seen: HttpClientMiddleware, @unchecked Sendable {
        let fromCache = Locked([Bool]())
        func intercept(_ request: HttpClientRequest,
                       next: @Sendable (HttpClientRequest) async throws -> HttpClientResponse) async throws -> HttpClientResponse {
            let response = try await next(request)
            fromCache.withLock { $0.append(response.isFromCache) }
            return response
        }
    }

    @Test func aClientAnswersOfflineFromWhatItStored() async throws {
        CacheFixture.on()
        let key = "client-\(UUID().uuidString)"
        let seen = Seen()
        var client = HttpClient(baseURL: try TestEnvironment.get().faultURL)
        client.middlewares = [seen]
        let path = "cache?key=\(key)&\(CacheFixture.h("Cache-Control", "max-age=1"))&date=offset:-700&body=hello"
        let online: String = try await client.invoke("GET", path: path)
        client.cachePolicy = [.readForced]
        let offline: String = try await client.invoke("GET", path: path)
        #expect(online == "hello" && offline == "hello")
        #expect(seen.fromCache.withLock { $0 } == [false, true])
        #expect(try CacheFixture.log(key).count == 1)
        // Nothing stored for another path: the call fails, and nothing is sent.
        do {
            let _: String = try await client.invoke("GET", path: "cache?key=\(key)-missing")
            Issue.record("an offline call with nothing stored succeeded")
        } catch {
            guard case .transfer(let failure) = error else {
                Issue.record("not a transfer failure: \(error)")
                return
            }
            #expect(failure.message.contains("Not in the cache"))
        }
        #expect(try CacheFixture.log("\(key)-missing").isEmpty)
    }
}
