@testable import CurlXHR
@testable import CurlXHRClient
import Foundation
import Testing

/// Private files a planted symbolic link cannot redirect: for each file the library makes (a
/// temporary file, a `.lock`, the cache's `changes`, `index.sqlite` and `bodies/`, a response
/// file's `.part` and validator), a link is put where it goes, pointing to a victim, and the
/// real operation runs. The victim stays as it was; the operation succeeds without following
/// the link, or fails with a clear reason. And the cookie API refuses a public suffix.
@Suite(.ownThreads) struct PlantedLinkTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    /// A new folder for the test's files.
    func folder(_ prefix: String) throws -> String {
        let path = try env.scratchPath(prefix)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A victim file with `content`, in a folder of its own.
    func victim(_ content: String) throws -> String {
        let path = try folder("victim") + "/victim"
        try Data(content.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func plant(_ link: String, to target: String) throws {
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
    }

    func contents(_ path: String) -> String? {
        (try? Data(contentsOf: URL(fileURLWithPath: path))).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether `path` itself (not followed) is a regular file, and its mode.
    func regularFile(_ path: String) -> (isRegular: Bool, mode: mode_t) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return (false, 0) }
        return ((info.st_mode & S_IFMT) == S_IFREG, info.st_mode & 0o777)
    }

    func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    func items(_ folder: String) -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? ["unreadable"] }

    /// Runs `curlxhr-probe` to its end: its exit status and its last line as JSON.
    func probe(_ arguments: [String]) throws -> (status: Int32, json: [String: Any], output: String) {
        let result = try Shell.run(TestEnvironment.builtProduct("curlxhr-probe"), arguments,
                                   environment: ["CURL_CA_BUNDLE": try env.caFile])
        let line = try #require(result.output.split(separator: "\n").last(where: { $0.hasPrefix("{") }), "\(result.output)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(result.output)")
        return (result.status, json, result.output)
    }

    // MARK: Cookie store

    /// The store's temporary file had the name `<store>.tmp-<pid>`: a link there took the
    /// store's content into the victim, and the rename left the store a link to it.
    @Test func aLinkAtTheCookieStoresTemporaryNameIsNotWrittenThrough() throws {
        let store = CookieStore.shared.file
        let victim = try victim("victim of the cookie store")
        let link = store + ".tmp-\(getpid())"
        try plant(link, to: victim)
        defer { unlink(link) }
        let cookie = Cookie(name: "planted\(UUID().uuidString.prefix(8).lowercased())", value: "v", domain: "www.planted.test",
                            expires: Int64(Date().timeIntervalSince1970) + 3600)
        #expect(CookieStore.shared.setCookie(cookie))
        defer { CookieStore.shared.deleteCookie(cookie) }
        #expect(contents(victim) == "victim of the cookie store")
        #expect(regularFile(store) == (true, 0o600), "the store is a file of its own, not the link")
        #expect(contents(store)?.contains("\t\(cookie.name)\tv") == true)
    }

    /// A link planted as the store's `.lock` made its target (open with O_CREAT followed it).
    @Test func aLinkAtTheCookieStoresLockCreatesNothing() throws {
        let store = try folder("cookies-lock") + "/cookies.txt"
        let target = try folder("victim") + "/made-by-the-lock"
        try plant(store + ".lock", to: target)
        let name = "lock\(UUID().uuidString.prefix(8).lowercased())"
        let set = "set_cookie=" + "\(name)=kept; Max-Age=3600; Path=/".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let (status, json, output) = try probe(["cookies", try env.httpURL + "/echo?" + set, store])
        #expect(status == 0 && json["status"] as? Int == 200, "\(output)")
        #expect(!exists(target), "the lock's link was not followed")
        #expect(contents(store)?.contains("\t\(name)\tkept") == true, "the cookie was still stored: \(output)")
    }

    /// xhr's `-c` file takes the same care: its `.lock` link made its target.
    @Test func xhrsCookieJarIsNotWrittenThroughALinkedLock() throws {
        let jar = try folder("xhr-jar") + "/jar.txt"
        let target = try folder("victim") + "/made-by-the-lock"
        try plant(jar + ".lock", to: target)
        let name = "jar\(UUID().uuidString.prefix(8).lowercased())"
        let set = "set_cookie=" + "\(name)=v; Path=/".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let result = try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), ["-s", "-c", jar, try env.httpURL + "/echo?" + set])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!exists(target))
        #expect(regularFile(jar) == (true, 0o600))
        #expect(contents(jar)?.contains("\t\(name)\tv") == true)
    }

    // MARK: Token file

    /// The token file's temporary file (`<file>.tmp-<pid>`) and `.lock`: the access token went
    /// into the victim (readable by whoever planted the link), and the file became the link.
    @Test func theTokenFileIsWrittenThroughNeitherItsTemporaryNorItsLock() throws {
        let path = try folder("token-file") + "/tokens.json"
        let victim = try victim("victim of the token file")
        let lockTarget = try folder("victim") + "/made-by-the-lock"
        try plant(path + ".tmp-\(getpid())", to: victim)
        try plant(path + ".lock", to: lockTarget)
        let file = TokenFile(path: path, tokenURL: "https://token.example/", clientID: "planted")
        let token = OAuth2Token(accessToken: "secret-\(UUID().uuidString)", refreshToken: "refresh")
        file.save(token)
        #expect(contents(victim) == "victim of the token file")
        #expect(!exists(lockTarget))
        #expect(regularFile(path) == (true, 0o600))
        #expect(file.load()?.accessToken == token.accessToken)
    }

    // MARK: Response files

    /// A new download's `.part` was opened with O_TRUNC through the link (the victim emptied
    /// and filled with the body, the file left a link to it), and so was its validator.
    @Test func aNewDownloadWritesNeitherThroughAPlantedPartNorThroughItsValidator() throws {
        let path = try folder("response-planted") + "/download.bin"
        let partVictim = try victim("victim of the .part")
        let validatorVictim = try victim("victim of the validator")
        try plant(path + ".part", to: partVictim)
        try plant(path + ".part.validator", to: validatorVictim)
        let request = fetchSync("GET", try env.faultURL + "/file?size=100000&version=3") { #expect($0.setResponseFile(path)) }.0
        #expect(request.getStatus() == 200, "\(request.getStatusText() ?? "")")
        #expect(contents(partVictim) == "victim of the .part")
        #expect(contents(validatorVictim) == "victim of the validator")
        #expect(regularFile(path).isRegular)
        let body = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(body.count == 100_000 && Pattern.matches(body, at: 3))
    }

    /// A resumed download measured the `.part` through the link (the victim's size), asked for
    /// the rest, and appended it to the victim.
    @Test func aResumeNeverAppendsToAPlantedPart() throws {
        let url = try env.faultURL + "/file?size=100000&version=4"
        let etag = try #require(fetchSync("GET", url).0.getResponseHeader("ETag"))
        let path = try folder("response-resume") + "/download.bin"
        let victim = try victim("victim of a resumed .part")
        try plant(path + ".part", to: victim)
        try Data((etag + "\n").utf8).write(to: URL(fileURLWithPath: path + ".part.validator"))
        let request = fetchSync("GET", url) { #expect($0.setResponseFile(path, resume: true)) }.0
        #expect(request.getStatus() == 200, "a link is no .part to resume: the whole body")
        #expect(contents(victim) == "victim of a resumed .part")
        let body = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(body.count == 100_000 && Pattern.matches(body, at: 4))
    }

    // MARK: Cache folder

    /// `cache-get` in a process of its own on `folder` (the cache is set once a process).
    func cacheGet(_ folder: String, key: String) throws -> (status: Int32, json: [String: Any], output: String) {
        try probe(["cache-get", folder, try CacheFixture.url(key, CacheFixture.h("Cache-Control", "max-age=600") + "&size=5000")])
    }

    /// The mapped change counter was opened through the link: the victim grew to a page of
    /// zeros and its first bytes were counted up.
    @Test func aLinkAtTheCachesChangesFileIsNotMapped() throws {
        let cache = try folder("cache-changes")
        let victim = try victim("victim of changes")
        try plant(cache + "/changes", to: victim)
        let key = "planted-changes-\(UUID().uuidString.prefix(8))"
        let first = try cacheGet(cache, key: key)
        #expect(first.status == 0 && first.json["status"] as? Int == 200 && first.json["cacheError"] == nil, "\(first.output)")
        let second = try cacheGet(cache, key: key)
        #expect(second.json["from_cache"] as? Bool == true, "the cache works without the shared counter: \(second.output)")
        #expect(contents(victim) == "victim of changes")
    }

    /// A `bodies` link: the cache wrote its bodies into the victim folder.
    @Test func aLinkedBodiesFolderIsNeverWrittenInto() throws {
        let cache = try folder("cache-bodies")
        let victimFolder = try folder("victim")
        try plant(cache + "/bodies", to: victimFolder)
        let result = try cacheGet(cache, key: "planted-bodies-\(UUID().uuidString.prefix(8))")
        #expect(result.json["status"] as? Int == 200, "the request is still made: \(result.output)")
        #expect(items(victimFolder).isEmpty, "\(items(victimFolder))")
        let error = result.json["cacheError"] as? String
        #expect(error?.contains("symbolic link") == true, "refused with a clear reason: \(result.output)")
    }

    /// An `index.sqlite` link to an empty file: SQLite made its database in the victim.
    @Test func aLinkAtTheCacheIndexIsNotOpened() throws {
        let cache = try folder("cache-index")
        let victim = try victim("")
        try plant(cache + "/index.sqlite", to: victim)
        let result = try cacheGet(cache, key: "planted-index-\(UUID().uuidString.prefix(8))")
        #expect(result.json["status"] as? Int == 200, "the request is still made: \(result.output)")
        #expect(contents(victim) == "")
        let victimFolder = (victim as NSString).deletingLastPathComponent
        #expect(items(victimFolder) == ["victim"], "no -wal or -shm beside the victim")
        let error = result.json["cacheError"] as? String
        #expect(error?.contains("symbolic link") == true, "refused with a clear reason: \(result.output)")
    }

    // MARK: Cookie API

    @Test(arguments: ["com", "co.uk", "COM", "github.io"])
    func setCookieRefusesAPublicSuffix(_ domain: String) {
        let cookie = Cookie(name: "suffix\(UUID().uuidString.prefix(8).lowercased())", value: "v", domain: domain)
        #expect(!CookieStore.shared.setCookie(cookie))
        #expect(!CookieStore.shared.allCookies().contains { $0.name == cookie.name })
    }

    @Test(arguments: ["example.com", "www.example.co.uk", "localhost"])
    func setCookieTakesADomainUnderAPublicSuffix(_ domain: String) {
        let cookie = Cookie(name: "owned\(UUID().uuidString.prefix(8).lowercased())", value: "v", domain: domain)
        #expect(CookieStore.shared.setCookie(cookie))
        #expect(CookieStore.shared.allCookies().contains { $0.name == cookie.name })
        CookieStore.shared.deleteCookie(cookie)
    }
}
