import Foundation
import Testing

/// The C interface as C programs use it: compiled with `cc -std=c11 -Wall -Wextra -Werror`
/// (and C++17 for one unit) against the installed header and library, found through
/// pkg-config, and run against the loopback servers.
///
/// `scripts/test.sh` installs the library under a temporary prefix and exports
/// `CURLXHR_PREFIX`; `scripts/install-c.sh PREFIX` does the same by hand.
@Suite(.ownThreads) struct CAPITests {
    let env: TestEnvironment
    let prefix: String

    init() throws {
        env = try TestEnvironment.get()
        guard let prefix = ProcessInfo.processInfo.environment["CURLXHR_PREFIX"] else {
            throw TestEnvironment.EnvironmentError(
                message: "CURLXHR_PREFIX is not set: run scripts/test.sh, or scripts/install-c.sh PREFIX and export CURLXHR_PREFIX=PREFIX")
        }
        self.prefix = prefix
    }

    /// Compiles one C (or C++) file and returns the program's path.
    func build(_ source: String, cplusplus: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let path = TestEnvironment.packageRoot.appendingPathComponent(source).path
        let output = FileManager.default.temporaryDirectory
            .appendingPathComponent("curlxhr-c-\(UUID().uuidString.prefix(8))-\((source as NSString).lastPathComponent)").path + ".bin"
        let pkgConfig = ["PKG_CONFIG_PATH": prefix + "/lib/pkgconfig"]
        let flags = try Shell.run("/usr/bin/pkg-config", ["--cflags", "--libs", "curlxhr"], environment: pkgConfig)
        #expect(flags.status == 0, "pkg-config: \(flags.output)", sourceLocation: sourceLocation)
        let compiler = cplusplus ? "/usr/bin/c++" : "/usr/bin/cc"
        let standard = cplusplus ? "-std=c++17" : "-std=c11"
        let arguments = [standard, "-Wall", "-Wextra", "-Werror", path, "-o", output]
            + flags.output.split(whereSeparator: \.isWhitespace).map(String.init) + ["-lpthread"]
        let compiled = try Shell.run(compiler, arguments)
        try #require(compiled.status == 0, "\(compiler) \(source):\n\(compiled.output)", sourceLocation: sourceLocation)
        return output
    }

    /// Runs a program with no library path set: it must find everything through RUNPATH.
    func run(_ program: String, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> Shell.Result {
        defer { try? FileManager.default.removeItem(atPath: program) }
        return try Shell.run(program, arguments, environment: ["LD_LIBRARY_PATH": nil])
    }

    func expectAllPassed(_ result: Shell.Result, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == 0, "\(result.output)", sourceLocation: sourceLocation)
        #expect(result.output.contains(" passed, 0 failed"), "\(result.output)", sourceLocation: sourceLocation)
    }

    /// libcurlxhr.so exports, of the `cxhr_` names, exactly the functions curlxhr.h declares:
    /// the library's internal C helpers stay inside it.
    @Test func theLibraryExportsOnlyWhatTheHeaderDeclares() throws {
        let header = try String(contentsOfFile: prefix + "/include/curlxhr.h", encoding: .utf8)
        let declared = Set(header.matches(of: /\b(cxhr_[a-z0-9_]+)\(/).map { String($0.output.1) })
        let symbols = try Shell.run("/usr/bin/nm", ["-D", "--defined-only", prefix + "/lib/libcurlxhr.so"])
        #expect(symbols.status == 0, "\(symbols.output)")
        let exported = Set(symbols.output.split(separator: "\n").compactMap { line -> String? in
            let name = line.split(separator: " ").last.map(String.init) ?? ""
            return name.hasPrefix("cxhr_") ? name : nil
        })
        #expect(declared.count > 70)
        #expect(exported.subtracting(declared).isEmpty, "exported but not in curlxhr.h: \(exported.subtracting(declared).sorted())")
        #expect(declared.subtracting(exported).isEmpty, "declared but not exported: \(declared.subtracting(exported).sorted())")
    }

    @Test func misuseIsRefusedAndRequestsWorkFromC() throws {
        let program = try build("Tests/C/capi_test.c")
        let selfSigned = "https://127.0.0.1:\(try env["TESTENV_HTTPS_SELFSIGNED_PORT"])"
        expectAllPassed(try run(program, [try env.httpURL, try env.faultURL, selfSigned, try env["TESTENV_USER"], try env["TESTENV_PASSWORD"]]))
    }

    @Test func proxiesFromC() throws {
        let program = try build("Tests/C/proxy_test.c")
        expectAllPassed(try run(program, [try env.httpURL] + (try ["TESTENV_CA_FILE", "TESTENV_PROXY_TLS_PORT", "TESTENV_SOCKS_PORT",
                                                                   "TESTENV_SOCKS_AUTH_PORT", "TESTENV_SOCKS_USER", "TESTENV_SOCKS_PASSWORD",
                                                                   "TESTENV_PROXY_TLS_PIN", "TESTENV_PROXY_MTLS_PORT", "TESTENV_CLIENT_CERT",
                                                                   "TESTENV_CLIENT_KEY", "TESTENV_SOCKS_GSSAPI_PORT",
                                                                   "TESTENV_SOCKS_GSSAPI_NOMETHOD_PORT", "TESTENV_KRB5CCNAME"].map { try env[$0] })))
    }

    @Test func eventsTimesAndTraceFromC() throws {
        let program = try build("Tests/C/observe_test.c")
        expectAllPassed(try run(program, [try env["TESTENV_DIGEST_URL"], try env["TESTENV_USER"], try env["TESTENV_PASSWORD"], try env.faultURL]))
    }

    @Test func rateLimitsFromC() throws {
        let program = try build("Tests/C/rate_test.c")
        expectAllPassed(try run(program, [try env.faultURL]))
    }

    @Test func curlCommandFromC() throws {
        let program = try build("Tests/C/curl_command_test.c")
        expectAllPassed(try run(program, [try env.httpURL]))
    }

    @Test func proxyAutoConfigFromC() throws {
        let program = try build("Tests/C/pac_test.c")
        let directory = try env.scratchPath("pac-c")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        expectAllPassed(try run(program, [try env.httpURL, try env["TESTENV_PROXY_PORT"], try env.faultURL, directory]))
    }

    @Test func clientCertificatesAndPinsFromC() throws {
        let program = try build("Tests/C/tls_identity_test.c")
        expectAllPassed(try run(program, try ["TESTENV_MTLS_URL", "TESTENV_CA_FILE", "TESTENV_CLIENT_CERT", "TESTENV_CLIENT_KEY",
                                              "TESTENV_CLIENT_P12", "TESTENV_CLIENT_PASSWORD", "TESTENV_LOCALHOST_PIN"].map { try env[$0] }))
    }

    @Test func theCacheFromCStoresAnswersRefusesAndTurnsOff() throws {
        let program = try build("Tests/C/cache_test.c")
        let directory = try env.scratchPath("cache-c")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let result = try run(program, [try env.faultURL, directory])
        expectAllPassed(result)
        // The folder was made where the program asked.
        #expect(FileManager.default.fileExists(atPath: directory + "/cache"))
        #expect(result.output.contains("refused as expected: "), "\(result.output)")
    }

    @Test func theHeaderCompilesAsCPlusPlus() throws {
        let program = try build("Tests/C/header_cpp.cpp", cplusplus: true)
        expectAllPassed(try run(program, []))
    }

    @Test func thirtyTwoThreadsOfTwoHundredSyncRequestsWithAsyncOnes() throws {
        let program = try build("Tests/C/worker_pool.c")
        // Some of the workers' requests need Digest authentication.
        let arguments = ["32", "200", try env.httpURL, try env.faultURL,
                         try env["TESTENV_DIGEST_FILE_URL"], try env["TESTENV_USER"], try env["TESTENV_PASSWORD"]]
        let result = try run(program, arguments)
        expectAllPassed(result)
        #expect(result.output.hasPrefix("\(32 * 200 + 100) passed"), "\(result.output)")
    }

    @Test func theExamplesBuildAndRun() throws {
        let sync = try run(try build("examples/c/sync.c"), [try env.httpURL + "/files/100b"])
        #expect(sync.status == 0, "\(sync.output)")
        #expect(sync.output.contains("status: 200 OK"))
        #expect(sync.output.contains("body: 100 bytes"))

        let async = try run(try build("examples/c/async.c"), [try env.faultURL + "/drip?chunks=3&size=10&interval_ms=20"])
        #expect(async.status == 0, "\(async.output)")
        let states = async.output.split(separator: "\n").map { $0.split(separator: " ").first.map(String.init) ?? "" }
        #expect(states.first == "OPENED")
        #expect(Array(states.prefix(3)) == ["OPENED", "SENT", "HEADERS_RECEIVED"])
        #expect(states.last == "DONE")
        #expect(async.output.contains("DONE             status 200, 30 bytes so far"))

        let workers = try run(try build("examples/c/workers.c"), [try env.httpURL + "/files/100b", "4", "25"])
        #expect(workers.status == 0, "\(workers.output)")
        #expect(workers.output.contains("100 passed, 0 failed"))

        // A download the server breaks off after 400,000 bytes, then a run that resumes it.
        let download = try build("examples/c/download.c")
        defer { try? FileManager.default.removeItem(atPath: download) }
        let file = try env.scratchPath("example-download") + ".bin"
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let key = UUID().uuidString, size = 1_000_000
        let broken = try Shell.run(download, [try env.faultURL + "/file?size=\(size)&key=\(key)&cut=400000", file], environment: ["LD_LIBRARY_PATH": nil])
        #expect(broken.status == 1 && broken.output.contains("left for a next run"), "\(broken.output)")
        #expect(!FileManager.default.fileExists(atPath: file) && FileManager.default.fileExists(atPath: file + ".part"))
        let resumed = try Shell.run(download, [try env.faultURL + "/file?size=\(size)&key=\(key)", file], environment: ["LD_LIBRARY_PATH": nil])
        #expect(resumed.status == 0 && resumed.output.contains("status 206: \(file) complete, 600000 bytes received by this run"),
                "\(resumed.output)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        #expect(bytes.count == size && bytes.enumerated().allSatisfy { $0.element == UInt8($0.offset % 251) })
        // Progress counts this response's body: the 600,000 bytes the resumed run asked for.
        #expect(resumed.output.contains("600000 of 600000 bytes (100 %)"), "\(resumed.output)")
    }
}
