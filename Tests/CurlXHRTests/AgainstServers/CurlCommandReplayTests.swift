import Foundation
import Testing
@testable import CurlXHR

/// ``HttpRequest/curlCommand()`` replayed: the library sends a request to the echo CGI, then
/// `sh` runs the command it gives (the password put back in place of `[redacted]`, here only)
/// with the real `curl`, and with the `xhr` the package builds in its place; the echo saw the
/// same method, URI, header fields (but `User-Agent`), user and body bytes all three times.
@Suite(.ownThreads) struct CurlCommandReplayTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    /// What the echo CGI saw of a request.
    struct Seen: Equatable {
        var method: String
        var uri: String
        var headers: [String: String]
        var user: String?
        var body: String?

        init(_ answer: Data) throws {
            let object = try #require(try JSONSerialization.jsonObject(with: answer) as? [String: Any], "\(String(decoding: answer, as: UTF8.self))")
            method = try #require(object["method"] as? String)
            uri = try #require(object["uri"] as? String)
            headers = try #require(object["headers"] as? [String: String])
            headers["User-Agent"] = nil
            user = object["remote_user"] as? String
            body = object["body_b64"] as? String
        }
    }

    static let bodies = [
        Data(#"{"name": "it's $HOME `id` \ ü"}"#.utf8),
        Data([0x00, 0x0D, 0x0A, 0xFF, 0x27, 0x25, 0x5C, 0x24] + Array("ü\r\n".utf8) + [0x00]),
    ]

    @Test(arguments: bodies)
    func curlAndXhrReplayWhatTheLibrarySent(body: Data) throws {
        let password = try env["TESTENV_PASSWORD"]
        let request = HttpRequest()
        #expect(request.curlCommand() == "", "nothing before open")
        #expect(request.open("POST", url: try env.httpURL + "/basic/echo/replay?q=a%20b&x=1", user: try env["TESTENV_USER"], password: password))
        #expect(request.setRequestHeader("X-Replay", value: #"it's $HOME `id` "q" \"#))
        // Cookies other suites left in the process's jar, and the PAC file some set for the
        // process, are not the request's own: the command carries neither.
        #expect(request.disableCookieHandling())
        #expect(request.disableHttpProxy())
        #expect(request.setRequestHeader("Content-Type", value: "application/octet-stream"))
        #expect(request.sendData(body))
        #expect(request.getStatus() == 200, "\(request.getStatusText() ?? "")")
        let library = try Seen(Data(request.getReceiveBuffer()))
        #expect(library.body == body.base64EncodedString())
        #expect(library.user == (try env["TESTENV_USER"]))

        let command = request.curlCommand()
        #expect(!command.contains(password), "\(command)")
        #expect(!command.contains("\n") && !command.contains("not expressible"), "\(command)")
        let replay = command.replacing("[redacted]", with: password)
        let curl = try XHRToolTests.run("/bin/sh", ["-c", replay])
        #expect(curl.status == 0, "\(replay)\n\(curl.stderr)")
        #expect(try Seen(curl.stdout) == library, "curl: \(replay)")

        let xhrPath = "'" + TestEnvironment.builtProduct("xhr") + "'"
        let withXHR = replay.hasPrefix("curl ") ? xhrPath + replay.dropFirst(4) : replay.replacing(" | curl ", with: " | \(xhrPath) ")
        let home = try env.scratchPath("curl-command-xhr")
        let xhr = try XHRToolTests.run("/bin/sh", ["-c", withXHR], environment: ["XDG_DATA_HOME": home, "XDG_STATE_HOME": home])
        #expect(xhr.status == 0, "\(withXHR)\n\(xhr.stderr)")
        #expect(try Seen(xhr.stdout) == library, "xhr: \(withXHR)")
    }
}
