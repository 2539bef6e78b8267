@testable import CurlXHR
import Foundation
import Testing

/// Automatic in-memory cookies shared by every request of the process (libcurl's engine).
/// Serialized because clearCookies empties the one jar.
@Suite(.serialized) struct CookieTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    func cookieSent(to url: String, configure: (HttpRequest) -> Void = { _ in }) throws -> String? {
        let (request, body) = fetchSync("GET", url, configure: configure)
        #expect(request.getStatus() == 200)
        return try Echo(body).header("Cookie")
    }

    @Test func aCookieSetByOneRequestIsSentByTheNext() throws {
        let name = "c\(UUID().uuidString.prefix(8))"
        let set = fetchSync("GET", try env.httpURL + "/echo/a?set_cookie=\(name)=v1;%20Path=/echo/a").0
        #expect(set.getResponseHeader("Set-Cookie")?.hasPrefix("\(name)=v1") == true)
        #expect(try cookieSent(to: try env.httpURL + "/echo/a/x")?.contains("\(name)=v1") == true)
        // Asynchronous requests share the same jar.
        let (_, seen) = fetchAsync("GET", try env.httpURL + "/echo/a/async")
        #expect(try Echo(seen.body).header("Cookie")?.contains("\(name)=v1") == true)
        // Not to another path, nor to another host.
        #expect(try cookieSent(to: try env.httpURL + "/echo/b")?.contains(name) != true)
        let otherHost = try env.httpURL.replacingOccurrences(of: "127.0.0.1", with: "localhost") + "/echo/a"
        #expect(try cookieSent(to: otherHost)?.contains(name) != true)
    }

    @Test func disableCookieHandlingNeitherSendsNorStores() throws {
        let name = "d\(UUID().uuidString.prefix(8))"
        let noStore: (HttpRequest) -> Void = { #expect($0.disableCookieHandling()) }
        _ = fetchSync("GET", try env.httpURL + "/echo?set_cookie=\(name)=v;%20Path=/", configure: noStore)
        #expect(try cookieSent(to: try env.httpURL + "/echo")?.contains(name) != true, "nothing was stored")
        _ = fetchSync("GET", try env.httpURL + "/echo?set_cookie=\(name)=v;%20Path=/")
        #expect(try cookieSent(to: try env.httpURL + "/echo")?.contains(name) == true)
        #expect(try cookieSent(to: try env.httpURL + "/echo", configure: noStore)?.contains(name) != true, "nothing is sent")
    }

    @Test func clearCookiesEmptiesTheJar() throws {
        let name = "e\(UUID().uuidString.prefix(8))"
        _ = fetchSync("GET", try env.httpURL + "/echo?set_cookie=\(name)=v;%20Path=/")
        #expect(try cookieSent(to: try env.httpURL + "/echo")?.contains(name) == true)
        HttpRequest().clearCookies(includePersistentStore: false)
        #expect(try cookieSent(to: try env.httpURL + "/echo")?.contains(name) != true)
    }
}
