@testable import CurlXHR
import Foundation
import Testing

/// A response stored for one user is never served to another: `Vary` is matched against the
/// fields the request really sent, the jar's cookies, credentials and the `Accept-Encoding`
/// of decoding included.
@Suite(.ownThreads) struct CacheIsolationTests {
    static let fresh = CacheFixture.h("Cache-Control", "public, max-age=600")

    /// A cookie of the jar sent only to this test's URLs (its own path).
    static func jarCookie(_ value: String, path: String) -> Cookie {
        Cookie(name: "sid", value: value, domain: "127.0.0.1", path: path)
    }

    /// GETs `url` and returns whether the cache answered and what the server echoed.
    func get(_ url: String, _ configure: (HttpRequest) -> Void = { _ in }) -> (fromCache: Bool, body: String) {
        let (request, body) = fetchSync("GET", url, configure: configure)
        #expect(request.getStatus() == 200, "\(request.getStatusText() ?? "")")
        return (request.isResponseFromCache(), String(decoding: body, as: UTF8.self))
    }

    /// A resource of its own (`path`, which the jar's test cookie is scoped to) that is fresh,
    /// varies on `Cookie` and echoes the `Cookie` it received.
    static func varyingOnCookie(_ prefix: String) throws -> (key: String, path: String, url: String) {
        let key = "\(prefix)-\(UUID().uuidString)"
        let path = "/cache/\(key)"
        return (key, path, try TestEnvironment.get().faultURL + path + "?key=\(key)&\(fresh)&\(CacheFixture.h("Vary", "Cookie"))&echo=Cookie")
    }

    /// The `sid` a body echoed or a logged `Cookie` held (other tests' cookies for the host
    /// may come along).
    static func sid(_ text: String?) -> String? {
        guard let text, let range = text.range(of: "sid=") else { return nil }
        return String(text[range.upperBound...].prefix { $0 != ";" && $0 != "," && $0 != " " })
    }

    /// A response to a request that showed a client certificate answered that certificate:
    /// nginx's /whoami is fresh for 600 s, and names it.
    @Test func aResponseToAClientCertificateIsServedToNoOther() throws {
        CacheFixture.on()
        let env = try TestEnvironment.get()
        // "/cache/" in the query: a URL the test cache takes part in (``CacheFixture``).
        let url = try env["TESTENV_MTLS_URL"] + "/whoami?in=/cache/\(UUID().uuidString)"
        let caFile = try env.caFile, cert = try env["TESTENV_CLIENT_CERT"], key = try env["TESTENV_CLIENT_KEY"]
        let (shown, body) = fetchSync("GET", url) { #expect($0.setCACertificateFile(caFile) && $0.setClientCertificate(cert, keyPath: key)) }
        #expect(shown.getStatus() == 200 && String(decoding: body, as: UTF8.self).hasPrefix("CN=xhr-client"))
        #expect(shown.getResponseHeader("Cache-Control") == "max-age=600")
        let (none, _) = fetchSync("GET", url) { #expect($0.setCACertificateFile(caFile)) }
        #expect(!none.isResponseFromCache() && none.getStatus() == 400, "the certificate's answer is not served without it")
        let (again, _) = fetchSync("GET", url) { #expect($0.setCACertificateFile(caFile) && $0.setClientCertificate(cert, keyPath: key)) }
        #expect(!again.isResponseFromCache() && again.getStatus() == 200, "a request with a certificate takes no part in the cache")
    }

    @Test func varyCookieMatchesTheJarsCookiesNotOnlyTheCallersFields() throws {
        CacheFixture.on()
        let (key, path, url) = try Self.varyingOnCookie("iso-cookie")
        defer { CookieStore.shared.deleteCookie(Self.jarCookie("", path: path)) }

        #expect(CookieStore.shared.setCookie(Self.jarCookie("alice", path: path)))
        let jarForAlice = CookieStore.shared.cookieHeader(for: url)
        let alice = get(url)
        #expect(!alice.fromCache && Self.sid(alice.body) == "alice", "\(alice.body)")

        #expect(CookieStore.shared.setCookie(Self.jarCookie("bob", path: path)))
        let bob = get(url)
        #expect(!bob.fromCache, "alice's response is not bob's")
        #expect(Self.sid(bob.body) == "bob", "\(bob.body)")

        // Without cookie handling the request sends none: neither stored response is its.
        let none = get(url) { #expect($0.disableCookieHandling()) }
        #expect(!none.fromCache)
        #expect(Self.sid(none.body) == nil, "\(none.body)")

        // Each variant still answers its own user (while the rest of the jar, which other
        // tests change too, is as it was).
        #expect(CookieStore.shared.setCookie(Self.jarCookie("alice", path: path)))
        let sameJar = CookieStore.shared.cookieHeader(for: url) == jarForAlice
        let aliceAgain = get(url)
        #expect(Self.sid(aliceAgain.body) == "alice")
        if sameJar { #expect(aliceAgain.fromCache && aliceAgain.body == alice.body) }
        let sent = try CacheFixture.log(key).map { Self.sid($0.header("Cookie")) }
        #expect(Array(sent.prefix(3)) == ["alice", "bob", nil], "\(sent)")
        #expect(sent.count == (aliceAgain.fromCache ? 3 : 4))
    }

    @Test func asynchronousAndAwaitedSendsMatchTheJarToo() async throws {
        CacheFixture.on()
        let (_, path, url) = try Self.varyingOnCookie("iso-async")
        defer { CookieStore.shared.deleteCookie(Self.jarCookie("", path: path)) }
        #expect(CookieStore.shared.setCookie(Self.jarCookie("alice", path: path)))
        let (first, _) = fetchAsync("GET", url)
        #expect(!first.isResponseFromCache())
        #expect(CookieStore.shared.setCookie(Self.jarCookie("bob", path: path)))
        let (second, seen) = fetchAsync("GET", url)
        #expect(!second.isResponseFromCache())
        #expect(Self.sid(String(decoding: seen.body, as: UTF8.self)) == "bob")
        let request = HttpRequest()
        #expect(request.open("GET", url: url))
        let response = try await request.response()
        let body = try await response.body.collect(upTo: 1 << 16)
        #expect(Self.sid(String(decoding: body, as: UTF8.self)) == "bob", "never alice's")
    }

    @Test func varyAuthorizationTellsCredentialsApart() throws {
        CacheFixture.on()
        let key = "iso-auth-\(UUID().uuidString)"
        let url = try CacheFixture.url(key, "\(Self.fresh)&\(CacheFixture.h("Vary", "Authorization"))&echo=Authorization")
        func get(_ user: String, _ password: String) -> (fromCache: Bool, body: String) {
            let request = HttpRequest()
            #expect(request.open("GET", url: url, user: user, password: password))
            #expect(request.send())
            return (request.isResponseFromCache(), String(decoding: request.getReceiveBuffer(), as: UTF8.self))
        }
        let alice = get("alice", "one")
        let bob = get("bob", "two")
        let alicesOtherPassword = get("alice", "three")
        let aliceAgain = get("alice", "one")
        #expect(!alice.fromCache && !bob.fromCache && !alicesOtherPassword.fromCache)
        #expect(aliceAgain.fromCache && aliceAgain.body == alice.body)
        #expect(bob.body != alice.body)
        #expect(try CacheFixture.log(key).count == 3)
        // What the index keeps stands for the credentials without revealing them.
        let tag = CacheKeys.credentialTag(Credentials(user: "alice", password: "one", scheme: .basic), url: url)
        #expect(!tag.contains("alice") && !tag.contains("one"))
        #expect(tag == CacheKeys.credentialTag(Credentials(user: "alice", password: "one", scheme: .basic), url: url))
        #expect(tag != CacheKeys.credentialTag(Credentials(user: "alice", password: "one", scheme: .digest), url: url))
    }

    @Test func varyAcceptEncodingTellsDecodingApart() throws {
        CacheFixture.on()
        let key = "iso-encoding-\(UUID().uuidString)"
        let url = try CacheFixture.url(key, "\(Self.fresh)&\(CacheFixture.h("Vary", "Accept-Encoding"))&echo=Accept-Encoding")
        let decoding = get(url)
        let raw = get(url) { #expect($0.disableContentDecoding()) }
        #expect(!decoding.fromCache && !raw.fromCache, "a request without Accept-Encoding is not answered with one's response")
        #expect(decoding.body.contains("Accept-Encoding: \(ContentDecoder.acceptedEncodings)"), "\(decoding.body)")
        #expect(get(url).fromCache && get(url) { _ = $0.disableContentDecoding() }.fromCache)
        #expect(try CacheFixture.log(key).count == 2)
    }
}
