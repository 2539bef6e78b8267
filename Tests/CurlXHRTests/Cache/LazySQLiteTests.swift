import Foundation
import Testing

/// SQLite is the cache's index alone: a program that uses no cache never maps it (start-up is
/// part of the product), and one that opens a cache loads it then, and works.
@Suite(.ownThreads) struct LazySQLiteTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    /// The libraries the dynamic loader reported loading during an xhr run (`LD_DEBUG=libs`).
    func loadedLibraries(_ arguments: [String]) throws -> (run: XHRToolTests.Run, libraries: String) {
        let run = try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), arguments, environment: ["LD_DEBUG": "libs"])
        let libraries = run.stderr.split(separator: "\n").filter { $0.contains("calling init:") }.joined(separator: "\n")
        return (run, libraries)
    }

    @Test func xhrWithoutACacheNeverLoadsSQLiteAndWithOneLoadsItWhenItOpens() throws {
        let url = try env.faultURL + "/bytes?n=100"
        let plain = try loadedLibraries(["-s", "-o", "/dev/null", url])
        #expect(plain.run.status == 0, "\(plain.run.stderr.suffix(2000))")
        #expect(plain.libraries.contains("libcurl"), "the loader's report was read: \(plain.libraries)")
        #expect(!plain.libraries.contains("libsqlite3"), "\(plain.libraries)")

        let folder = try env.scratchPath("lazy-sqlite")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let cached = try loadedLibraries(["-s", "-o", "/dev/null", "--cache", folder, url])
        #expect(cached.run.status == 0, "\(cached.run.stderr.suffix(2000))")
        #expect(cached.libraries.contains("libsqlite3"), "\(cached.libraries)")
        #expect(FileManager.default.fileExists(atPath: folder + "/index.sqlite"), "the cache's index was made")
    }
}
