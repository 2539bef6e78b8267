import Foundation
import Testing
@testable import CurlXHR

/// `xhr` with several URLs, `-Z`, and the HTTP version options, against the HTTP/2 servers.
@Suite(.ownThreads) struct XHRParallelTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    func xhr(_ arguments: [String], directory: String? = nil) throws -> XHRToolTests.Run {
        try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), arguments, directory: directory)
    }

    @Test func includePrintsTheHTTP2StatusLineAndHTTP11OnRequest() throws {
        let url = try env.h2URL + "/small"
        let h2 = try xhr(["-s", "-i", "--cacert", try env.caFile, url])
        #expect(h2.status == 0 && h2.text.hasPrefix("HTTP/2 200 \r\n"), "\(h2.text.prefix(40))")
        let h1 = try xhr(["-s", "-i", "--http1.1", "--cacert", try env.caFile, url])
        #expect(h1.status == 0 && h1.text.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(h1.text.prefix(40))")
        let written = try xhr(["-s", "-w", "%{http_version}", "-o", "/dev/null", "--cacert", try env.caFile, url])
        #expect(written.text == "2")
    }

    @Test func priorKnowledgeIsRefusedAndSaysWhy() throws {
        let run = try xhr(["--http2-prior-knowledge", try env.httpURL + "/files/100b"])
        #expect(run.status == 2 && run.stderr.contains("libcurl 7.88") && run.stdout.isEmpty)
    }

    @Test func parallelFetchesTwentySlowURLsAtOnceEachToItsFile() throws {
        let server = try SlowServer()
        let folder = try env.scratchPath("parallel")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var arguments = ["-s", "-Z", "--parallel-max", "20", "--output-dir", folder, "--cacert", server.caFile]
        for index in 0..<20 { arguments += [server.url(ms: 1000, tag: "z\(index)"), "-o", "z\(index).json"] }
        let run = try xhr(arguments)
        #expect(run.status == 0, "\(run.stderr)")
        for index in 0..<20 {
            let data = try Data(contentsOf: URL(fileURLWithPath: "\(folder)/z\(index).json"))
            let answer = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            #expect(answer["tag"] as? String == "z\(index)" && answer["http_version"] as? String == "2")
        }
        // All twenty at the server at once, as streams of one connection.
        let stats = try server.stats()
        #expect(stats.max_in_flight == 20 && stats.client_ports.count == 1 && stats.http_versions == ["2"])
    }

    @Test func parallelMaxBoundsTheTransfersAtTheServer() throws {
        let server = try SlowServer()
        let folder = try env.scratchPath("parallel-max")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var arguments = ["-s", "-Z", "--parallel-max", "3", "--cacert", server.caFile]
        for index in 0..<9 { arguments += [server.url(ms: 200, tag: "m\(index)"), "-o", "\(folder)/m\(index)"] }
        let run = try xhr(arguments)
        #expect(run.status == 0, "\(run.stderr)")
        let stats = try server.stats()
        #expect(stats.max_in_flight == 3 && stats.started.count == 9)
        // Without -Z, one at a time, in order.
        let sequential = try SlowServer()
        var inOrder = ["-s", "--cacert", sequential.caFile]
        for index in 0..<4 { inOrder += [sequential.url(ms: 20, tag: "s\(index)"), "-o", "\(folder)/s\(index)"] }
        #expect(try xhr(inOrder).status == 0)
        let sequentialStats = try sequential.stats()
        #expect(sequentialStats.max_in_flight == 1 && sequentialStats.started == ["s0", "s1", "s2", "s3"])
    }

    @Test func severalURLsNeedAFileEachAndAFailureNamesItsURL() throws {
        let url = try env.h2URL + "/small"
        let folder = try env.scratchPath("parallel-files")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let noFiles = try xhr(["--cacert", try env.caFile, url, url])
        #expect(noFiles.status == 2 && noFiles.stderr.contains("give -o once per URL"))
        let sameFile = try xhr(["--cacert", try env.caFile, "--output-dir", folder, "-O", url, url + "?again"])
        #expect(sameFile.status == 2 && sameFile.stderr.contains("the same file"))
        let oneURLOnly = try xhr(["-i", "--cacert", try env.caFile, url, "-o", "\(folder)/a", url, "-o", "\(folder)/b"])
        #expect(oneURLOnly.status == 2 && oneURLOnly.stderr.contains("-i works with one URL only"))
        // One good, one missing (-f): the good file is written, the run fails with 22 and names the other.
        let missing = try env.h2URL + "/missing"
        let mixed = try xhr(["-Z", "-f", "--cacert", try env.caFile, url, "-o", "\(folder)/good", missing, "-o", "\(folder)/bad"])
        #expect(mixed.status == 22 && mixed.stderr.contains(missing), "\(mixed.stderr)")
        #expect(FileManager.default.contents(atPath: "\(folder)/good")?.count == 100)
        #expect(!FileManager.default.fileExists(atPath: "\(folder)/bad"))
    }

    @Test func aURLTheLibraryRefusesStopsTheRunBeforeAnythingIsSent() throws {
        let server = try SlowServer()
        let folder = try env.scratchPath("parallel-refused")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let run = try xhr(["-Z", "--cacert", server.caFile, server.url(ms: 10, tag: "first"), "-o", "\(folder)/first",
                           "ftp://127.0.0.1/file", "-o", "\(folder)/second"])
        #expect(run.status == 2 && run.stderr.contains("ftp"), "\(run.status) \(run.stderr)")
        #expect(try server.stats().started.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: "\(folder)/first"))
    }
}

