import Foundation
import Testing
@testable import CurlXHR

/// `xhr --cache DIR` (and --cache-max, --offline) run as a user runs it, against the fault
/// server's `/cache` resource, which logs every request it sees under its key: what a run
/// prints, and whether it reached the server. Each test has its own folder and keys.
@Suite(.ownThreads) struct XHRCacheTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    func xhr(_ arguments: [String]) throws -> XHRToolTests.Run {
        try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), arguments)
    }

    /// A folder of this test's own, not made yet.
    func newFolder() throws -> String { try env.scratchPath("xhr-cache") }

    func newKey() -> String { "xhr-" + UUID().uuidString }

    /// The fault server's text body of `key` at version 0.
    func body(_ key: String) -> String { "body of \(key), version 0" }

    static let fresh = CacheFixture.h("Cache-Control", "max-age=600")
    static let etag = "etag=" + CacheFixture.encoded("\"e\"")
    /// Fresh for 600 s by its headers, but its Date is 700 s old: stale from the start.
    static let stale = "\(fresh)&\(etag)&date=offset:-700"

    /// `-i` output split at the blank line: the head's lines (without CR) and the body.
    func split(_ run: XHRToolTests.Run) -> (lines: [String], body: String) {
        let text = run.text
        guard let end = text.range(of: "\r\n\r\n") else { return ([], text) }
        let lines = text[..<end.lowerBound].components(separatedBy: "\r\n")
        return (lines, String(text[end.upperBound...]))
    }

    /// The value of a field in `-i` head lines, or nil.
    func field(_ name: String, in lines: [String]) -> String? {
        lines.dropFirst().first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
            .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
    }

    /// `--cache-max`: storing beyond the cap removes the least recently used entries, a hit by
    /// an earlier run counting as a use.
    @Test func theCapEvictsTheLeastRecentlyUsedAcrossRuns() throws {
        let folder = try newFolder()
        let keys = (0..<4).map { "\(newKey())-\($0)" }
        let urls = try keys.map { try CacheFixture.url($0, "\(Self.fresh)&size=100000") }
        func run(_ url: String, offline: Bool = false) throws -> XHRToolTests.Run {
            try xhr(["-s", "-o", "/dev/null", "-w", "%{http_code}", "--cache", folder, "--cache-max", "350K"] + (offline ? ["--offline"] : []) + [url])
        }
        for url in urls.prefix(3) { #expect(try run(url).text == "200") }  // 300,000 bytes and heads: under 350 KiB
        #expect(try run(urls[0]).text == "200")  // a hit: key 0 is now the most recently used
        #expect(try CacheFixture.log(keys[0]).count == 1)
        #expect(try run(urls[3]).text == "200")  // over the cap: key 1, the least recently used, goes
        #expect(try run(urls[1], offline: true).status == 1)
        for index in [0, 2, 3] {
            let hit = try run(urls[index], offline: true)
            #expect(hit.status == 0 && hit.text == "200", "key \(index): \(hit.stderr)")
        }
        let bodies = try FileManager.default.contentsOfDirectory(atPath: folder + "/bodies")
        #expect(bodies.count == 3, "\(bodies)")
    }

    // (a)
    @Test func aSecondRunWithTheSameFolderIsAnsweredFromTheCache() throws {
        let folder = try newFolder(), key = newKey()
        let url = try CacheFixture.url(key, "\(Self.fresh)&\(Self.etag)")
        let first = try xhr(["--cache", folder, url])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.text == body(key))
        let second = try xhr(["--cache", folder, url])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.text == body(key))
        #expect(try CacheFixture.log(key).count == 1, "the second run sent nothing")
        // Without --cache the tool keeps nothing: the server sees the request.
        let without = try xhr([url])
        #expect(without.status == 0 && without.text == body(key))
        #expect(try CacheFixture.log(key).count == 2)
    }

    // (b)
    @Test func includeOnAHitPrintsTheStoredStatusLineAndFieldsWithAge() throws {
        let folder = try newFolder(), key = newKey()
        let url = try CacheFixture.url(key, "\(Self.fresh)&\(Self.etag)&\(CacheFixture.h("X-Stored", "yes"))")
        let first = split(try xhr(["-i", "--cache", folder, url]))
        #expect(first.lines.first == "HTTP/1.1 200 OK")
        #expect(field("Age", in: first.lines) == nil, "the server sends no Age")
        let hit = try xhr(["-i", "--cache", folder, url])
        #expect(hit.status == 0, "\(hit.stderr)")
        let (lines, body) = split(hit)
        #expect(lines.first == "HTTP/1.1 200 OK", "\(hit.text)")
        #expect(field("X-Stored", in: lines) == "yes")
        #expect(field("ETag", in: lines) == "\"e\"")
        #expect(field("Cache-Control", in: lines) == "max-age=600")
        #expect(field("Content-Type", in: lines) == "text/plain")
        let age = try #require(field("Age", in: lines).flatMap { Int($0) }, "\(lines)")
        #expect((0...60).contains(age))
        #expect(body == self.body(key))
        #expect(try CacheFixture.log(key).count == 1)
        // -w sees the stored response as well.
        let written = try xhr(["-s", "-o", "/dev/null", "-w", "%{http_code} %{http_version} %header{X-Stored}", "--cache", folder, url])
        #expect(written.text == "200 1.1 yes")
        #expect(try CacheFixture.log(key).count == 1)
    }

    // (c)
    @Test func aStaleEntryIsValidatedOnceAndTheStoredResponsePrinted() throws {
        let folder = try newFolder(), key = newKey()
        let url = try CacheFixture.url(key, Self.stale)
        let first = try xhr(["--cache", folder, url])
        #expect(first.status == 0 && first.text == body(key), "\(first.stderr)")
        let second = try xhr(["-i", "--cache", folder, url])
        #expect(second.status == 0, "\(second.stderr)")
        let (lines, body) = split(second)
        #expect(lines.first == "HTTP/1.1 200 OK", "the 304 is never printed: \(second.text)")
        // In the head only: the body names the key, a UUID, which may hold the digits "304".
        #expect(!lines.contains { $0.contains("304") }, "\(lines)")
        #expect(body == self.body(key))
        let log = try CacheFixture.log(key)
        try #require(log.count == 2, "one request per run")
        #expect(!log[0].isConditional)
        #expect(log[1].isConditional && log[1].header("If-None-Match") == "\"e\"" && log[1].status == 304)
    }

    // (d)
    @Test func offlineAnswersFromTheCacheOnlyAndFailsOnAMiss() throws {
        let folder = try newFolder(), key = newKey()
        let url = try CacheFixture.url(key, Self.stale)
        let miss = try xhr(["-i", "--cache", folder, "--offline", url])
        #expect(miss.status == 1, "\(miss.stderr)")
        #expect(miss.stdout.isEmpty, "no head: \(miss.text)")
        #expect(miss.stderr.contains("xhr: Not in the cache"), "\(miss.stderr)")
        #expect(try CacheFixture.log(key).count == 0, "nothing went to the server")

        let stored = try xhr(["--cache", folder, url])
        #expect(stored.status == 0 && stored.text == body(key))
        // Stale (700 s old, fresh for 600): --offline answers without validating.
        let offline = try xhr(["-i", "--cache", folder, "--offline", url])
        #expect(offline.status == 0, "\(offline.stderr)")
        let (lines, body) = split(offline)
        #expect(lines.first == "HTTP/1.1 200 OK")
        let age = try #require(field("Age", in: lines).flatMap { Int($0) })
        #expect(age >= 700)
        #expect(body == self.body(key))
        #expect(try CacheFixture.log(key).count == 1, "only the storing run reached the server")
    }

    @Test func offlineRefusesWhatTheCacheCannotAnswerBeforeAnyRequest() throws {
        let folder = try newFolder(), key = newKey()
        let url = try CacheFixture.url(key, Self.fresh)
        for arguments in [["--offline"], ["--cache-max", "10"], ["--cache", folder, "--offline", "-X", "POST"],
                          ["--cache", folder, "--offline", "-d", "a=1"], ["--cache", folder, "--offline", "-r", "0-9"],
                          ["--cache", folder, "--offline", "-H", "Range: bytes=0-9"], ["--cache", folder, "--cache-max", "0"],
                          ["--cache", folder, "--cache-max", "12X"]] {
            let run = try xhr(arguments + [url])
            #expect(run.status == 2, "\(arguments): \(run.stderr)")
            #expect(run.stdout.isEmpty)
        }
        #expect(try CacheFixture.log(key).count == 0)
        #expect(!FileManager.default.fileExists(atPath: folder), "a refused command line makes no folder")
        // Sizes with a suffix are accepted.
        let sized = try xhr(["-s", "--cache", folder, "--cache-max", "10M", url])
        #expect(sized.status == 0 && sized.text == body(key), "\(sized.stderr)")
    }

    // (e)
    @Test func onlyIfCachedOnAMissPrintsTheCachesGatewayTimeout() throws {
        let folder = try newFolder(), key = newKey()
        let url = try CacheFixture.url(key, Self.fresh)
        let run = try xhr(["-i", "--cache", folder, "-H", "Cache-Control: only-if-cached", url])
        #expect(run.status == 0, "a response like any other: \(run.stderr)")
        let (lines, body) = split(run)
        #expect(lines.first == "HTTP/1.1 504 Gateway Timeout", "\(run.text)")
        #expect(body.isEmpty)
        let failing = try xhr(["-s", "-f", "-w", "%{http_code}", "--cache", folder, "-H", "Cache-Control: only-if-cached", url])
        #expect(failing.status == 22 && failing.text == "504")
        #expect(try CacheFixture.log(key).count == 0, "nothing went to the server")
    }

    // (f)
    @Test func requestNoCacheAndPragmaReachTheServerInAConditionalRequest() throws {
        let folder = try newFolder(), key = newKey()
        let url = try CacheFixture.url(key, "\(Self.fresh)&\(Self.etag)")
        #expect(try xhr(["--cache", folder, url]).text == body(key))
        let noCache = try xhr(["--cache", folder, "-H", "Cache-Control: no-cache", url])
        #expect(noCache.status == 0 && noCache.text == body(key), "\(noCache.stderr)")
        let pragma = try xhr(["--cache", folder, "-H", "Pragma: no-cache", url])
        #expect(pragma.status == 0 && pragma.text == body(key), "\(pragma.stderr)")
        // Still fresh: the next plain run sends nothing.
        #expect(try xhr(["--cache", folder, url]).text == body(key))
        let log = try CacheFixture.log(key)
        try #require(log.count == 3, "\(log.map(\.headers))")
        #expect(log[0].header("Cache-Control") == nil && log[0].header("Pragma") == nil, "xhr adds neither: \(log[0].headers)")
        #expect(log[1].isConditional && log[1].header("Cache-Control") == "no-cache" && log[1].header("Pragma") == nil)
        #expect(log[2].isConditional && log[2].header("Pragma") == "no-cache" && log[2].header("Cache-Control") == nil)
    }

    // (g)
    @Test func anUnsafeMethodGoesToTheServerAndTheNextGetToo() throws {
        let folder = try newFolder()
        for method in [["-X", "POST"], ["-d", "a=1"], ["-X", "PUT"], ["-X", "DELETE"], ["-X", "PURGE"]] {
            let key = newKey()
            let url = try CacheFixture.url(key, "\(Self.fresh)&\(Self.etag)")
            #expect(try xhr(["--cache", folder, url]).text == body(key))
            #expect(try xhr(["--cache", folder, url]).text == body(key))
            let unsafe = try xhr(["--cache", folder] + method + [url])
            #expect(unsafe.status == 0 && unsafe.text == body(key), "\(method): \(unsafe.stderr)")
            let after = try xhr(["--cache", folder, url])
            #expect(after.status == 0 && after.text == body(key))
            let log = try CacheFixture.log(key)
            let sent = method[0] == "-d" ? "POST" : method[1]
            #expect(log.map(\.method) == ["GET", sent, "GET"], "\(method): the stored response was removed")
            #expect(log.last.map { !$0.isConditional } == true)
        }
    }

    // (h)
    @Test func twoProcessesShareOneFolderAndAThirdRunFindsBothEntries() throws {
        let folder = try newFolder()
        let keys = [newKey(), newKey()]
        // Each answer waits 1.5 s: the two runs are at the server at the same time.
        let urls = try keys.map { try CacheFixture.url($0, "\(Self.fresh)&\(Self.etag)&delay_ms=1500") }
        let runs = Locked([Int: XHRToolTests.Run]())
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            let run = try? xhr(["-s", "--cache", folder, urls[index]])
            runs.withLock { $0[index] = run }
        }
        for index in 0..<2 {
            let run = try #require(runs.withLock { $0[index] })
            #expect(run.status == 0 && run.text == body(keys[index]), "\(run.stderr)")
        }
        let times = try keys.map { try #require(try requestTimes($0).first) }
        #expect(abs(times[0] - times[1]) < 1.5, "both in flight at once: \(times)")

        let output = try newFolder()
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        let third = try xhr(["-s", "--cache", folder, "--output-dir", output, urls[0], "-o", "a", urls[1], "-o", "b"])
        #expect(third.status == 0, "\(third.stderr)")
        #expect(try String(contentsOfFile: output + "/a", encoding: .utf8) == body(keys[0]))
        #expect(try String(contentsOfFile: output + "/b", encoding: .utf8) == body(keys[1]))
        for key in keys { #expect(try CacheFixture.log(key).count == 1, "the third run sent nothing") }
    }

    /// When the server saw each request of `key` (seconds since 1970).
    func requestTimes(_ key: String) throws -> [Double] {
        let (request, data) = fetchSync("GET", try env.faultURL + "/cache-log?key=\(key)")
        try #require(request.getStatus() == 200)
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return (json["requests"] as? [[String: Any]] ?? []).compactMap { $0["time"] as? Double }
    }

    // (i)
    @Test func anEmptyFolderIsAcceptedAndARegularFileRefused() throws {
        let folder = try newFolder(), key = newKey()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let url = try CacheFixture.url(key, "\(Self.fresh)&\(Self.etag)")
        let first = try xhr(["--cache", folder, url])
        #expect(first.status == 0 && first.text == body(key), "\(first.stderr)")
        #expect(try xhr(["--cache", folder, url]).text == body(key))
        #expect(try CacheFixture.log(key).count == 1, "the empty folder became a working cache")

        let file = try newFolder()
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data("not a folder".utf8).write(to: URL(fileURLWithPath: file))
        let other = newKey()
        let otherURL = try CacheFixture.url(other, Self.fresh)
        for path in [file, file + "/cache"] {
            let refused = try xhr(["--cache", path, otherURL])
            #expect(refused.status == 2, "\(refused.stderr)")
            #expect(refused.stdout.isEmpty)
            #expect(refused.stderr.hasPrefix("xhr: --cache \(path): "), "\(refused.stderr)")
            #expect(refused.stderr.contains("Not a directory"), "\(refused.stderr)")
        }
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "not a folder")
        #expect(try CacheFixture.log(other).count == 0, "no request before the refusal")
    }
}
