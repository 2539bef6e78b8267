@testable import CurlXHR
import Foundation
import Testing

/// ``CacheStore`` on disk: entries found by key and `Vary` values, replaced, evicted least
/// recently used first at the size cap, and what a crashed writer leaves removed when the store
/// opens; files private.
@Suite(.ownThreads) struct CacheStoreTests {
    let folder = NSTemporaryDirectory() + "curlxhr-cache-\(UUID().uuidString)"

    func entry(_ key: String, vary: [String] = [], values: [String?] = [], fields: CacheRules.Fields = [("Cache-Control", "max-age=60")],
               time: Double = 1000) -> CacheStore.Entry {
        CacheStore.Entry(key: key, varyNames: vary, varyValues: values,
                         stored: CacheRules.Stored(status: 200, fields: fields, requestTime: time, responseTime: time))
    }

    /// Stores `entry` with `body`.
    @discardableResult
    func put(_ store: CacheStore, _ entry: CacheStore.Entry, _ body: String, now: Double = 1000) throws -> CacheStore.Entry {
        let file = try store.beginBody()
        let bytes = Array(body.utf8)
        #expect(bytes.withUnsafeBytes { write(file.descriptor, $0.baseAddress, $0.count) } == bytes.count)
        return try store.store(entry, body: file, now: now)
    }

    func body(_ store: CacheStore, _ entry: CacheStore.Entry?) -> String? {
        guard let entry else { return nil }
        return try? String(contentsOfFile: store.bodyPath(entry), encoding: .utf8)
    }

    @Test func anEntryIsFoundByItsKeyAndVaryValuesAndReplacedByTheSame() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try CacheStore(folder: folder, maxBytes: 1 << 20)
        try put(store, entry("http://h/a", fields: [("Content-Type", "text/plain"), ("ETag", "\"1\"")]), "first")
        try put(store, entry("http://h/v", vary: ["accept-language"], values: ["en"]), "english")
        try put(store, entry("http://h/v", vary: ["accept-language"], values: ["fr"]), "français")
        let found = try #require(store.entry(for: "http://h/a", requestFields: []))
        #expect(body(store, found) == "first" && found.stored.fields.map(\.value) == ["text/plain", "\"1\""])
        #expect(body(store, store.entry(for: "http://h/v", requestFields: [("Accept-Language", "fr")])) == "français")
        #expect(body(store, store.entry(for: "http://h/v", requestFields: [("Accept-Language", "en")])) == "english")
        #expect(store.entry(for: "http://h/v", requestFields: []) == nil)
        #expect(store.entry(for: "http://h/none", requestFields: []) == nil)

        // The same key and values: replaced, the old body file gone.
        let old = try #require(store.entry(for: "http://h/a", requestFields: []))
        try put(store, entry("http://h/a"), "second")
        #expect(body(store, store.entry(for: "http://h/a", requestFields: [])) == "second")
        #expect(store.entries(for: "http://h/a").count == 1)
        #expect(!FileManager.default.fileExists(atPath: store.bodyPath(old)))

        store.remove(key: "http://h/v")
        #expect(store.entries(for: "http://h/v").isEmpty)
    }

    @Test func theLeastRecentlyUsedGoFirstAtTheSizeCap() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fields: CacheRules.Fields = [("A", "b")]  // 5 bytes of head
        let store = try CacheStore(folder: folder, maxBytes: 3 * 105)
        let body = String(repeating: "x", count: 100)
        let one = try put(store, entry("k1", fields: fields), body, now: 1)
        try put(store, entry("k2", fields: fields), body, now: 2)
        try put(store, entry("k3", fields: fields), body, now: 3)
        #expect(store.totalBytes == 315)
        store.touch(one, now: 4)  // k2 is now the least recently used
        try put(store, entry("k4", fields: fields), body, now: 5)
        #expect(store.entries(for: "k2").isEmpty)
        #expect(!store.entries(for: "k1").isEmpty && !store.entries(for: "k3").isEmpty && !store.entries(for: "k4").isEmpty)
        #expect(store.totalBytes == 315)
        let files = try FileManager.default.contentsOfDirectory(atPath: folder + "/bodies")
        #expect(files.count == 3)
    }

    @Test func openingRemovesWhatACrashedWriterLeftAndKeepsWhatALiveOneWrites() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var store: CacheStore? = try CacheStore(folder: folder, maxBytes: 1 << 20)
        let kept = try put(store!, entry("kept"), "whole")
        let vanished = try put(store!, entry("vanished"), "gone")
        let live = try store!.beginBody()  // still being written, by "another process"
        store = nil
        // A torn body (a .part nobody holds), a body without a row, a row without a body.
        let bodies = folder + "/bodies/"
        try Data("torn".utf8).write(to: URL(fileURLWithPath: bodies + "0123.part"))
        try Data("orphan".utf8).write(to: URL(fileURLWithPath: bodies + "4567"))
        try FileManager.default.removeItem(atPath: bodies + vanished.bodyName)

        let reopened = try CacheStore(folder: folder, maxBytes: 1 << 20)
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: bodies))
        #expect(files == [kept.bodyName, live.name + ".part"])
        #expect(body(reopened, reopened.entry(for: "kept", requestFields: [])) == "whole")
        #expect(reopened.entries(for: "vanished").isEmpty)
        reopened.discard(live)
    }

    @Test func theFolderIsPrivate() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try CacheStore(folder: folder, maxBytes: 1 << 20)
        let stored = try put(store, entry("k"), "body")
        func mode(_ path: String) throws -> Int { try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) }
        #expect(try mode(folder) == 0o700 && mode(folder + "/bodies") == 0o700)
        #expect(try mode(folder + "/index.sqlite") == 0o600 && mode(store.bodyPath(stored)) == 0o600)
        #expect(try mode(folder + "/index.sqlite-wal") == 0o600)
    }

    @Test func twoProcessesFillingOneFolderLoseNothing() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let probe = TestEnvironment.builtProduct("curlxhr-probe")
        let runs = ["one", "two"].map { prefix in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: probe)
            process.arguments = ["cache-fill", folder, prefix, "200"]
            let output = Pipe()
            process.standardOutput = output
            return (process, output)
        }
        for (process, _) in runs { try process.run() }
        for (process, output) in runs {
            process.waitUntilExit()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(process.terminationStatus == 0 && text.contains("\"stored\":200"), "\(text)")
        }
        let store = try CacheStore(folder: folder, maxBytes: 1 << 30)
        for prefix in ["one", "two"] {
            for index in 0..<200 {
                let key = "\(prefix)-\(index)"
                #expect(body(store, store.entry(for: key, requestFields: [])) == String(repeating: key, count: 100), "\(key)")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder + "/bodies").count == 400)
    }

    @Test func aFolderThatCannotBeMadeIsAFailureWithAReason() {
        #expect(throws: CacheStore.Failure.self) { try CacheStore(folder: "/proc/no-such-place/cache", maxBytes: 1 << 20) }
    }
}
