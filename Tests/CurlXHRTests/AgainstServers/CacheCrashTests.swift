import Foundation
import Testing

/// The cache folder across processes, through the network: a process killed (SIGKILL) while
/// it stores a 100 MiB body leaves nothing that is ever served, and the next one stores it
/// whole; two processes filling one folder at once lose nothing and keep one body for a key
/// both fetched; a damaged index still lets requests through. Each step is a `curlxhr-probe`
/// process of its own (`cache-get`, `cache-check`) on a folder of the test's, against the
/// fault server's `/cache` resource, whose log shows what reached the network.
@Suite(.serialized, .ownThreads) struct CacheCrashTests {
    static let fresh = CacheFixture.h("Cache-Control", "max-age=600")
    static let bigSize = 104_857_600
    /// The SHA-256 of the 100 MiB pattern (byte i = i % 251), from sha256sum.
    static let bigSHA256 = "85a38859acdd54fd3381d9f1e0d4c8ad8158f2c66c0a496d1756585056ebed76"

    let folder: String

    init() throws {
        folder = try TestEnvironment.get().scratchPath("cache-crash")
    }

    static func uniqueKey(_ name: String) -> String { "crash-\(name)-\(UUID().uuidString.prefix(8))" }

    /// `curlxhr-probe` started with `arguments`, its standard output and error to `output`.
    func launchProbe(_ arguments: [String], output: Any) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestEnvironment.builtProduct("curlxhr-probe"))
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = output
        try process.run()
        return process
    }

    /// Waits for `processes` to exit; one still running after `limit` is killed, a failure
    /// (a hang must not stick the run).
    func waitForExit(_ processes: [Process], limit: Duration = .seconds(180), sourceLocation: SourceLocation = #_sourceLocation) {
        let deadline = ContinuousClock.now + limit
        while processes.contains(where: \.isRunning), ContinuousClock.now < deadline { usleep(10_000) }
        for process in processes {
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                Issue.record("curlxhr-probe \(process.arguments?.joined(separator: " ") ?? "") was still running after \(limit): killed",
                             sourceLocation: sourceLocation)
            }
            process.waitUntilExit()
        }
    }

    /// The JSON line an exited probe printed to `output`; `exits` are the exit statuses that
    /// are not a failure.
    func probeResult(_ process: Process, _ output: Pipe, exits: Set<Int32> = [0],
                     sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationReason == .exit && exits.contains(process.terminationStatus),
                "curlxhr-probe \(process.arguments?.first ?? "") ended with \(process.terminationStatus): \(text)", sourceLocation: sourceLocation)
        let line = try #require(text.split(separator: "\n").last, "no output", sourceLocation: sourceLocation)
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(text)",
                            sourceLocation: sourceLocation)
    }

    /// Runs the probe with `arguments` to its end and decodes its JSON line.
    func probeRun(_ arguments: [String], exits: Set<Int32> = [0], sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let output = Pipe()
        let process = try launchProbe(arguments, output: output)
        waitForExit([process], sourceLocation: sourceLocation)
        return try probeResult(process, output, exits: exits, sourceLocation: sourceLocation)
    }

    /// One `cache-get` of each URL (`policy`: default or offline), the results in order.
    func cacheGet(_ urls: [String], _ policy: String = "default", exits: Set<Int32> = [0],
                  sourceLocation: SourceLocation = #_sourceLocation) throws -> (results: [[String: Any]], cacheError: String?) {
        let json = try probeRun(["cache-get", folder, urls[0], policy] + urls.dropFirst(), exits: exits, sourceLocation: sourceLocation)
        let results = urls.count == 1 ? [json] : try #require(json["results"] as? [[String: Any]], sourceLocation: sourceLocation)
        return (results, json["cacheError"] as? String)
    }

    /// What `cache-check` finds once the store opened the folder (and removed leftovers).
    struct Check {
        let entries: [(key: String, body: String, size: Int)]
        let bodyFiles: [String: Int]
        let parts: [String]
        let integrity: [String]
    }

    func cacheCheck(sourceLocation: SourceLocation = #_sourceLocation) throws -> Check {
        let json = try probeRun(["cache-check", folder], sourceLocation: sourceLocation)
        let rows = try #require(json["entries"] as? [[String: Any]], "\(json)", sourceLocation: sourceLocation)
        return Check(entries: rows.map { ($0["key"] as? String ?? "", $0["body"] as? String ?? "", $0["size"] as? Int ?? -1) },
                     bodyFiles: json["body_files"] as? [String: Int] ?? [:], parts: json["parts"] as? [String] ?? [],
                     integrity: json["integrity"] as? [String] ?? [])
    }

    /// The body files of the folder being written (`.part`), with their sizes.
    func partFiles() -> [(name: String, size: Int64)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder + "/bodies")) ?? []
        return names.filter { $0.hasSuffix(".part") }.compactMap { name in
            var status = stat()
            return stat(folder + "/bodies/" + name, &status) == 0 ? (name, Int64(status.st_size)) : nil
        }
    }

    func expectWhole(_ result: [String: Any], size: Int, fromCache: Bool, _ comment: String,
                     sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result["status"] as? Int == 200 && result["bytes"] as? Int == size && result["pattern_ok"] as? Bool == true
                && result["from_cache"] as? Bool == fromCache, "\(comment): \(result)", sourceLocation: sourceLocation)
    }

    @Test func aProcessKilledWhileStoringLeavesNothingServedAndTheNextStoresItWhole() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let key = Self.uniqueKey("kill")
        let url = try CacheFixture.url(key, "size=\(Self.bigSize)&\(Self.fresh)")

        let started = ContinuousClock.now
        let process = try launchProbe(["cache-get", folder, url], output: FileHandle.nullDevice)
        // Poll every 10 ms; kill once a body being stored is past 10 MiB and still growing.
        var previous: Int64 = -1
        var killedAt: (size: Int64, after: Duration)?
        while process.isRunning, killedAt == nil, ContinuousClock.now - started < .seconds(120) {
            if let part = partFiles().first {
                if part.size > 10 << 20, previous >= 0, part.size > previous {
                    kill(process.processIdentifier, SIGKILL)
                    killedAt = (part.size, ContinuousClock.now - started)
                }
                previous = part.size
            }
            usleep(10_000)
        }
        if killedAt == nil, process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        guard let killedAt else {
            Issue.record("""
                the probe was not killed mid-store: it \(process.terminationReason == .exit ? "finished" : "ended") \
                (status \(process.terminationStatus)) after \(ContinuousClock.now - started), before its .part file \
                was seen past 10 MiB and growing (last seen: \(previous) bytes); the 100 MiB transfer is too fast to catch
                """)
            return
        }
        print("CacheCrashTests: SIGKILL at \(killedAt.size) bytes of the .part file, \(killedAt.after) after the start")
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL)
        // What the crash left: a .part nobody holds, no finished body.
        let left = try FileManager.default.contentsOfDirectory(atPath: folder + "/bodies")
        try #require(left.count == 1 && left[0].hasSuffix(".part"),
                     "the kill came too late: the store had finished (bodies/: \(left))")
        #expect(try CacheFixture.log(key).count == 1)

        // Offline: the torn body is never served (and the store removes it as it opens).
        let offline = try #require(try cacheGet([url], "offline").results.first)
        #expect(offline["status"] as? Int == 0 && !(offline["status_text"] as? String ?? "").isEmpty
                && offline["from_cache"] as? Bool == false && offline["bytes"] as? Int == 0, "\(offline)")
        let cleaned = try cacheCheck()
        #expect(cleaned.parts.isEmpty && cleaned.bodyFiles.isEmpty, "\(cleaned)")
        #expect(!cleaned.entries.contains { $0.key == url }, "\(cleaned.entries)")
        #expect(cleaned.integrity == ["ok"])
        #expect(try CacheFixture.log(key).count == 1, "the offline run must not reach the network")

        // The next process stores it whole; one more request reached the server.
        let stored = try #require(try cacheGet([url]).results.first)
        expectWhole(stored, size: Self.bigSize, fromCache: false, "stored again")
        #expect(stored["sha256"] as? String == Self.bigSHA256)
        #expect(try CacheFixture.log(key).count == 2)
        let check = try cacheCheck()
        #expect(check.parts.isEmpty && check.entries.count == 1 && check.entries.first?.key == url
                && check.entries.first?.size == Self.bigSize, "\(check)")
        #expect(check.bodyFiles == [check.entries.first?.body ?? "": Self.bigSize], "\(check.bodyFiles)")

        // And answers offline, whole.
        let served = try #require(try cacheGet([url], "offline").results.first)
        expectWhole(served, size: Self.bigSize, fromCache: true, "served offline")
        #expect(served["sha256"] as? String == Self.bigSHA256)
        #expect(try CacheFixture.log(key).count == 2)
    }

    @Test func twoProcessesFillingOneFolderThroughTheNetworkLoseNothing() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Both processes ask for the shared key first; its answer waits 1 s before its head,
        // so both miss, both fetch and both store it: the later store replaces the earlier.
        let shared = Self.uniqueKey("shared")
        let sharedURL = try CacheFixture.url(shared, "size=3000001&delay_ms=1000&\(Self.fresh)")
        var sizes = [sharedURL: 3_000_001]
        let lists = try [[1, 70_001, 1_048_577, 4_000_000], [0, 251, 524_288, 2_500_003]].enumerated().map { process, list in
            try [sharedURL] + list.enumerated().map { index, size in
                let url = try CacheFixture.url(Self.uniqueKey("p\(process)-\(index)"), "size=\(size)&\(Self.fresh)")
                sizes[url] = size
                return url
            }
        }
        let runs = try lists.map { urls in
            let output = Pipe()
            return (try launchProbe(["cache-get", folder, urls[0], "default"] + urls.dropFirst(), output: output), output)
        }
        waitForExit(runs.map(\.0))
        for (process, output) in runs {
            let json = try probeResult(process, output)
            let results = try #require(json["results"] as? [[String: Any]], "\(json)")
            try #require(results.count == 5)
            for result in results {
                let url = result["url"] as? String ?? ""
                expectWhole(result, size: sizes[url] ?? -1, fromCache: false, "from the network")
            }
        }
        #expect(try CacheFixture.log(shared).count == 2, "both processes must have fetched (and stored) the shared key")

        // Every entry whole, from the cache, without the network.
        let urls = Array(sizes.keys)
        let offline = try cacheGet(urls, "offline")
        #expect(offline.cacheError == nil)
        for (url, result) in zip(urls, offline.results) {
            expectWhole(result, size: sizes[url] ?? -1, fromCache: true, "offline")
        }
        #expect(try CacheFixture.log(shared).count == 2)

        // One row and one body file per key: the shared key stored once.
        let check = try cacheCheck()
        #expect(check.integrity == ["ok"] && check.parts.isEmpty)
        #expect(check.entries.filter { $0.key == sharedURL }.count == 1, "\(check.entries)")
        #expect(Set(check.entries.map(\.key)) == Set(urls) && check.entries.count == urls.count, "\(check.entries)")
        #expect(check.bodyFiles == Dictionary(uniqueKeysWithValues: check.entries.map { ($0.body, sizes[$0.key] ?? -1) }),
                "\(check.bodyFiles) for \(check.entries)")
    }

    enum Damage: String, CaseIterable, Sendable {
        /// Random bytes in place of the index, its WAL gone: SQLite finds no database.
        case garbage
        /// The index cut to nothing (its WAL left).
        case empty
    }

    /// A damaged index must not cost the request, nor the cache: the request comes from the
    /// network, a new index replaces the damaged one (its bodies removed as leftovers), and the
    /// response is stored again.
    @Test(arguments: Damage.allCases)
    func aDamagedIndexIsReplacedAndTheRequestGoesThrough(_ damage: Damage) throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let key = Self.uniqueKey("index-\(damage)")
        let url = try CacheFixture.url(key, "size=100000&\(Self.fresh)")
        expectWhole(try #require(try cacheGet([url]).results.first), size: 100_000, fromCache: false, "first")
        expectWhole(try #require(try cacheGet([url], "offline").results.first), size: 100_000, fromCache: true, "stored")

        let index = folder + "/index.sqlite"
        switch damage {
        case .garbage:
            // The index's pages stay in the WAL until a checkpoint (a small index: for good):
            // garbage in index.sqlite alone would go unnoticed.
            var random = SystemRandomNumberGenerator()
            try Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &random) }).write(to: URL(fileURLWithPath: index))
            for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: index + suffix) }
        case .empty:
            try Data().write(to: URL(fileURLWithPath: index))
        }

        let after = try cacheGet([url], exits: [0, 1])
        let result = try #require(after.results.first)
        #expect(result["status"] as? Int == 200 && result["bytes"] as? Int == 100_000 && result["pattern_ok"] as? Bool == true,
                "the request must still work: \(result)")
        #expect(try CacheFixture.log(key).count == 2)
        // A new index replaces the damaged one: the response is stored again and answers offline.
        #expect(after.cacheError == nil, "\(after.cacheError ?? "")")
        #expect(result["from_cache"] as? Bool == false)
        let offline = try #require(try cacheGet([url], "offline").results.first)
        expectWhole(offline, size: 100_000, fromCache: true, "after a new index")
        let check = try cacheCheck()
        #expect(check.integrity == ["ok"] && check.entries.count == 1 && check.bodyFiles.count == 1, "\(check)")
    }
}
