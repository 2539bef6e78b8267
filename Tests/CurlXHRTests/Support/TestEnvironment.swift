@testable import CurlXHR
import Foundation
import Testing

/// The loopback servers the tests run against (Apache, the fault server), started by
/// `Tests/Servers/start.sh` and described by its `testenv.json`.
///
/// When `TESTENV_DIR` names a running environment (as `scripts/test.sh` arranges), it is
/// used; otherwise the first test that needs it starts one in a temporary directory and the
/// process stops it at exit. A server that cannot start fails the test with the script's
/// own words; nothing is skipped.
struct TestEnvironment: Sendable {
    let values: [String: String]

    subscript(_ name: String) -> String {
        get throws {
            guard let value = values[name] else {
                throw EnvironmentError(message: "testenv.json has no \(name)")
            }
            return value
        }
    }

    var httpURL: String { get throws { try self["TESTENV_HTTP_URL"] } }
    var httpsURL: String { get throws { try self["TESTENV_HTTPS_URL"] } }
    var faultURL: String { get throws { try self["TESTENV_FAULT_URL"] } }
    var caFile: String { get throws { try self["TESTENV_CA_FILE"] } }
    /// The fault server's routes on a Unix socket (a path) and in the abstract namespace
    /// (`@NAME`); its `/echo` says which socket a request came through (`"socket"`).
    var faultUnixSocket: String { get throws { try self["TESTENV_FAULT_UNIX_SOCKET"] } }
    var faultAbstractSocket: String { get throws { try self["TESTENV_FAULT_ABSTRACT_SOCKET"] } }
    /// nginx speaking HTTP/2 over TLS (and HTTP/1.1 to those who ask), its access log with
    /// one line a request: `$connection $connection_requests $server_protocol $request_method
    /// $request_uri $status …` (``H2AccessLog``).
    var h2URL: String { get throws { try self["TESTENV_H2_URL"] } }
    var h2Log: String { get throws { try self["TESTENV_H2_LOG"] } }
    /// hypercorn over TLS (HTTP/2 and HTTP/1.1) with `/slow` and `/stats` (``SlowServer``).
    var slowH2URL: String { get throws { try self["TESTENV_SLOW_H2_URL"] } }
    var otherCAFile: String { get throws { try self["TESTENV_OTHER_CA_FILE"] } }
    /// django-oauth-toolkit under Django's runserver, plain HTTP (`Connection: close` on every
    /// answer). The token endpoint takes the grants password (the password client, user
    /// `TESTENV_USER`), client_credentials (the service client) and refresh_token, with client
    /// auth by Basic or by form fields. Refresh tokens rotate: the one a refresh used is then
    /// answered 400 `invalid_grant`. Access tokens live ``oauth2AccessTokenSeconds``.
    var oauth2URL: String { get throws { try self["TESTENV_OAUTH2_URL"] } }
    var oauth2TokenURL: String { get throws { try self["TESTENV_OAUTH2_TOKEN_URL"] } }
    /// RFC 7009 revocation: POST `token=<refresh token>&token_type_hint=refresh_token` with the
    /// client's auth; that refresh token (and its access token) is refused from then on.
    var oauth2RevokeURL: String { get throws { try self["TESTENV_OAUTH2_REVOKE_URL"] } }
    /// GET or POST with a bearer token: 200 `{"user": name or null, "client_id": …,
    /// "token_suffix": the token's last 6 characters}`, else 401 with `WWW-Authenticate: Bearer
    /// error="invalid_token"`. `?delay_ms=N` holds the answer N ms (the token is checked after).
    var oauth2ResourceURL: String { get throws { try self["TESTENV_OAUTH2_RESOURCE_URL"] } }
    /// `{"token_posts": n, "grants": {"password": n, "client_credentials": n, "refresh_token": n},
    /// "token_errors": n, "resource_401": n, "resource_200": n}` since the start or the last reset.
    var oauth2StatsURL: String { get throws { try self["TESTENV_OAUTH2_STATS_URL"] } }
    var oauth2StatsResetURL: String { get throws { try self["TESTENV_OAUTH2_STATS_RESET_URL"] } }
    var oauth2PasswordClientID: String { get throws { try self["TESTENV_OAUTH2_PASSWORD_CLIENT_ID"] } }
    var oauth2PasswordClientSecret: String { get throws { try self["TESTENV_OAUTH2_PASSWORD_CLIENT_SECRET"] } }
    var oauth2ServiceClientID: String { get throws { try self["TESTENV_OAUTH2_SERVICE_CLIENT_ID"] } }
    var oauth2ServiceClientSecret: String { get throws { try self["TESTENV_OAUTH2_SERVICE_CLIENT_SECRET"] } }
    var oauth2AccessTokenSeconds: Int {
        get throws {
            let value = try self["TESTENV_OAUTH2_ACCESS_TOKEN_SECONDS"]
            guard let seconds = Int(value) else {
                throw EnvironmentError(message: "TESTENV_OAUTH2_ACCESS_TOKEN_SECONDS is '\(value)', not a number")
            }
            return seconds
        }
    }
    /// A new path for a test's files inside the environment's directory, which
    /// `scripts/test.sh` removes when the run ends: tests leave nothing behind in /tmp.
    /// A fresh path in the environment's scratch folder, which exists once this returns.
    func scratchPath(_ prefix: String) throws -> String {
        let folder = try self["TESTENV_DIR"] + "/scratch"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder + "/\(prefix)-\(UUID().uuidString)"
    }

    func httpsURL(port name: String, host: String = "localhost") throws -> String {
        "https://\(host):\(try self[name])"
    }

    struct EnvironmentError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    static func get() throws -> TestEnvironment {
        try shared.get()
    }

    private static let shared: Result<TestEnvironment, EnvironmentError> = Result(catching: { try start() })
        .mapError { $0 as? EnvironmentError ?? EnvironmentError(message: "\($0)") }

    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A program built beside the test bundle (`swift build` puts every product there).
    static func builtProduct(_ name: String) -> String {
        let bundle = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: bundle).deletingLastPathComponent().appendingPathComponent(name).path
    }

    private static let startedDirectory = Locked<String?>(nil)

    private static func start() throws -> TestEnvironment {
        if let dir = ProcessInfo.processInfo.environment["TESTENV_DIR"],
           FileManager.default.fileExists(atPath: dir + "/testenv.json") {
            return try load(dir + "/testenv.json")
        }
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("curlxhr-testenv-\(getpid())").path
        let script = packageRoot.appendingPathComponent("Tests/Servers/start.sh").path
        let result = try Shell.run("/bin/bash", [script, dir])
        guard result.status == 0 else {
            throw EnvironmentError(message: "the test servers did not start (\(script) exited \(result.status)):\n\(result.output)")
        }
        startedDirectory.withLock { $0 = dir }
        atexit {
            guard let dir = TestEnvironment.startedDirectory.withLock({ $0 }) else { return }
            let stop = TestEnvironment.packageRoot.appendingPathComponent("Tests/Servers/stop.sh").path
            _ = try? Shell.run("/bin/bash", [stop, dir])
        }
        return try load(dir + "/testenv.json")
    }

    private static func load(_ path: String) throws -> TestEnvironment {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw EnvironmentError(message: "\(path) is not a JSON object")
        }
        let environment = TestEnvironment(values: object.mapValues { "\($0)" })
        // libkrb5 must see the test realm's configuration before its first use, and the
        // tests' cookies stay out of the user's own store.
        if let config = environment.values["KRB5_CONFIG"] { setenv("KRB5_CONFIG", config, 1) }
        CookieStore.shared.file = (path as NSString).deletingLastPathComponent + "/cookies-\(getpid()).txt"
        return environment
    }
}

/// Runs a program and collects its exit status and combined output.
enum Shell {
    struct Result {
        let status: Int32
        let output: String
    }

    /// `environment` changes the inherited variables: a `nil` value removes one.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String?] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var variables = ProcessInfo.processInfo.environment
        for (name, value) in environment { variables[name] = value }
        process.environment = variables
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: String(decoding: output, as: UTF8.self))
    }
}

/// Runs `curlxhr-probe` (a process of its own, for what only a process can show: its memory,
/// its environment) and decodes its one JSON line.
func probe(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
    let result = try Shell.run(TestEnvironment.builtProduct("curlxhr-probe"), arguments)
    #expect(result.status == 0, "\(result.output)", sourceLocation: sourceLocation)
    let line = try #require(result.output.split(separator: "\n").last, sourceLocation: sourceLocation)
    return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], sourceLocation: sourceLocation)
}
