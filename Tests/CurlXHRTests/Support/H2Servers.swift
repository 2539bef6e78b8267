@testable import CurlXHR
import Foundation
import Testing

/// The hypercorn app of the test servers (`Tests/Servers/h2app.py`): `/slow` answers after a
/// delay and records each request's start; `/stats` tells, for one group of requests, how
/// many were at the server at once, in which order they started, on which client ports and
/// over which HTTP versions. Each test counts its own group.
struct SlowServer {
    let base: String
    let caFile: String
    let group = UUID().uuidString

    init() throws {
        let environment = try TestEnvironment.get()
        base = try environment.slowH2URL
        caFile = try environment.caFile
    }

    func url(ms: Int, tag: String) -> String { "\(base)/slow?ms=\(ms)&tag=\(tag)&group=\(group)" }

    /// `url(ms:tag:)` under the server's other name, for HTTP/1.1 requests.
    func http11URL(ms: Int, tag: String) -> String { http11Name(url(ms: ms, tag: tag)) }



    struct Stats: Decodable {
        let in_flight: Int
        let max_in_flight: Int
        let started: [String]
        let client_ports: [Int]
        let http_versions: [String]
    }

    func stats(sourceLocation: SourceLocation = #_sourceLocation) throws -> Stats {
        let (request, body) = fetchSync("GET", "\(base)/stats?group=\(group)", configure: { $0.setCACertificateFile(caFile) },
                                        sourceLocation: sourceLocation)
        try #require(request.getStatus() == 200, "stats: \(request.getStatusText() ?? "")", sourceLocation: sourceLocation)
        return try JSONDecoder().decode(Stats.self, from: body)
    }
}

/// The lines of the HTTP/2 nginx's access log for the requests whose URI contains a tag.
struct H2AccessLog {
    struct Line {
        let connection: String
        let serverProtocol: String
        let uri: String
        let status: Int
    }

    let path: String

    init() throws { path = try TestEnvironment.get().h2Log }

    /// The lines with `tag` in their URI, once `count` of them are there (nginx writes a line
    /// just after the response's last byte: up to 2 s is allowed for them to appear).
    func lines(tagged tag: String, count: Int) -> [Line] {
        var found: [Line] = []
        for _ in 0..<200 {
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            found = text.split(separator: "\n").compactMap { line in
                let fields = line.split(separator: " ").map(String.init)
                guard fields.count >= 6, fields[4].contains(tag) else { return nil }
                return Line(connection: fields[0], serverProtocol: fields[2], uri: fields[4], status: Int(fields[5]) ?? 0)
            }
            if found.count >= count { break }
            usleep(10_000)
        }
        return found
    }
}

/// Sends `requests` (opened, asynchronous, each with its `Recorder` as delegate) at once and
/// waits for every DONE; returns the seconds from the first send to the last DONE.
@discardableResult
func sendAllAndWait(_ requests: [(HttpRequest, Recorder)], sourceLocation: SourceLocation = #_sourceLocation) -> Double {
    let start = Date()
    for (request, _) in requests {
        #expect(request.send(), "send: \(request.lastError?.message ?? "")", sourceLocation: sourceLocation)
    }
    for (_, recorder) in requests { #expect(recorder.waitForDone(), "no DONE within 30 s", sourceLocation: sourceLocation) }
    return Date().timeIntervalSince(start)
}

/// An asynchronous request opened for `url`, trusting the test CA, with a recorder.
func openedAsync(_ url: String, caFile: String, configure: (HttpRequest) -> Void = { _ in },
                 sourceLocation: SourceLocation = #_sourceLocation) -> (HttpRequest, Recorder) {
    let request = HttpRequest()
    let recorder = Recorder()
    request.delegate = recorder
    #expect(request.open("GET", url: url, async: true), sourceLocation: sourceLocation)
    #expect(request.setCACertificateFile(caFile), sourceLocation: sourceLocation)
    configure(request)
    return (request, recorder)
}

/// `url` with host 127.0.0.1 instead of localhost (the test certificate names both): libcurl
/// lets a request that may use HTTP/2 take an idle HTTP/1.1 connection to the same host name
/// and port, and a host name with an HTTP/1.1 connection no longer waits for multiplexing
/// (PIPEWAIT), so tests that keep requests on HTTP/1.1 use the other name, never the one the
/// HTTP/2 tests of other suites use at the same time.
func http11Name(_ url: String) -> String {
    url.replacingOccurrences(of: "://localhost:", with: "://127.0.0.1:")
}
