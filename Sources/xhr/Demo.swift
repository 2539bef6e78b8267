import CurlXHR
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `xhr demo`: a tour of HttpRequest against a server inside this process.
/// Starts an HTTP server on 127.0.0.1 in the process (no network needed), then runs a
/// synchronous GET, an asynchronous GET with every ready state, a form POST, a drip-fed body
/// reported LOADING by LOADING, an abort, a redirect followed and not followed, a cookie set
/// and sent back, and Basic and Digest authentication. Each check is marked ✓ or ✗; the exit
/// status is 0 only if every check passed. Cookies go to a temporary store, never to yours.
struct Demo {
    func run() throws {
        let server = try DemoServer()
        defer { server.stop() }
        let store = FileManager.default.temporaryDirectory.appendingPathComponent("xhr-demo-\(getpid())")
        CookieStore.shared.file = store.appendingPathComponent("cookies.txt").path
        defer { try? FileManager.default.removeItem(at: store) }

        var tour = Tour(base: server.baseURL)
        print("CurlXHR demo: an XHR-style HTTP client over libcurl, talking to \(server.baseURL) (inside this process)")
        tour.synchronousGet()
        tour.asynchronousGet()
        tour.formPost()
        tour.dripFedBody()
        tour.abort()
        tour.redirects()
        tour.cookies()
        tour.basicAuth()
        tour.digestAuth()
        print("\n\(tour.passed) checks passed, \(tour.failed) failed.")
        if tour.failed > 0 { throw ExitCode(1) }
    }
}

/// The demo's steps; each prints what happened and checks it.
struct Tour {
    let base: String
    var passed = 0
    var failed = 0

    mutating func check(_ ok: Bool, _ what: String) {
        print("   \(ok ? "✓" : "✗") \(what)")
        if ok { passed += 1 } else { failed += 1 }
    }

    func step(_ number: Int, _ title: String, _ code: String) {
        print("\n\(number). \(title)\n   \(code)")
    }

    static func text(_ data: Data) -> String {
        Text.trimmed(String(decoding: data, as: UTF8.self))
    }

    /// Opens `request` asynchronously with `open` (after setting the delegate: an
    /// asynchronous open already reports OPENED), sends it, and records every state the
    /// delegate sees until DONE.
    func runAsync(_ request: HttpRequest, open: (HttpRequest) -> Void, whenSent: (HttpRequest) -> Void = { _ in }) -> Watcher {
        let watcher = Watcher()
        request.delegate = watcher
        open(request)
        request.send()
        whenSent(request)
        watcher.done.wait()
        return watcher
    }

    mutating func synchronousGet() {
        step(1, "A synchronous GET", #"request.open("GET", url: …/hello); request.send()"#)
        let request = HttpRequest()
        request.open("GET", url: base + "/hello")
        print("   after open: \(request.getState())")
        request.send(timeout: 10)
        print("   after send: \(request.getState()), status \(request.getStatus()) \(request.getStatusText() ?? "")")
        let body = Tour.text(request.getReceiveBuffer())
        print("   body: \(body)")
        check(request.getState() == .done && request.getStatus() == 200, "send returned in DONE with 200")
    }

    mutating func asynchronousGet() {
        step(2, "An asynchronous GET, every ready state reported to the delegate", #"request.open("GET", url: …, async: true); request.send()"#)
        let request = HttpRequest()
        let watcher = runAsync(request) { $0.open("GET", url: base + "/hello", async: true) }
        let states = watcher.states.withLock { $0 }
        check(states.first == .opened && states.contains(.sent) && states.filter { $0 == .headersReceived }.count == 1
              && states.contains(.loading) && states.last == .done, "states in order: " + states.map(\.description).joined(separator: " → "))
    }

    mutating func formPost() {
        step(3, "A form POST", #"request.setPostValue("Ada Lovelace", forKey: "name"); request.send()"#)
        let request = HttpRequest()
        request.open("POST", url: base + "/form")
        request.setPostValue("Ada Lovelace", forKey: "name")
        request.setPostValue("London & Paris", forKey: "city")
        request.send(timeout: 10)
        let body = Tour.text(request.getReceiveBuffer())
        print(body.split(separator: "\n").map { "   server: \($0)" }.joined(separator: "\n"))
        check(body.contains("application/x-www-form-urlencoded") && body.contains("city = London & Paris"),
              "the server decoded both fields")
    }

    mutating func dripFedBody() {
        step(4, "A body that arrives slowly: LOADING is reported as each piece arrives", "five lines, 150 ms apart")
        let request = HttpRequest()
        let watcher = runAsync(request) { $0.open("GET", url: base + "/drip", async: true) }
        let pieces = watcher.pieces.withLock { $0 }
        for piece in pieces { print("   LOADING  +\(piece.milliseconds) ms  \(Text.trimmed(piece.text))") }
        check(pieces.count >= 3, "\(pieces.count) LOADING reports, each with the new bytes only")
    }

    mutating func abort() {
        step(5, "abort() while waiting for a slow answer", "request.abort() in SENT")
        let request = HttpRequest()
        let started = Date()
        let watcher = runAsync(request, open: { $0.open("GET", url: base + "/slow", async: true) }, whenSent: { request in
            usleep(200_000)
            print("   aborting in \(request.getState())")
            request.abort()
        })
        let seconds = Date().timeIntervalSince(started)
        print("   state \(request.getState()), status \(request.getStatus()), text \"\(request.getStatusText() ?? "")\"")
        check(request.getState() == .done && request.getStatus() == 0 && seconds < 2 && watcher.states.withLock { $0.last } == .done,
              "DONE at once (" + Fixed.text(seconds, decimals: 1) + " s), status 0, one DONE callback")
    }

    mutating func redirects() {
        step(6, "Redirects: followed by default, returned after disableFollowLocation()", "…/redirect answers 302 Location: /hello")
        let followed = HttpRequest()
        followed.open("GET", url: base + "/redirect")
        followed.send(timeout: 10)
        check(followed.getStatus() == 200 && Tour.text(followed.getReceiveBuffer()).hasPrefix("Hello"), "followed: 200 from /hello")
        let kept = HttpRequest()
        kept.disableFollowLocation()
        kept.open("GET", url: base + "/redirect")
        kept.send(timeout: 10)
        check(kept.getStatus() == 302 && kept.getResponseHeader("Location") == "/hello", "not followed: 302, Location: /hello")
    }

    mutating func cookies() {
        step(7, "Cookies: set by one response, sent by the next request", "automatic, shared by every request")
        let set = HttpRequest()
        set.open("GET", url: base + "/cookie/set")
        set.send(timeout: 10)
        print("   Set-Cookie: \(set.getResponseHeader("Set-Cookie") ?? "")")
        let show = HttpRequest()
        show.open("GET", url: base + "/cookie/show")
        show.send(timeout: 10)
        let seen = Tour.text(show.getReceiveBuffer())
        print("   the server saw: \(seen)")
        check(seen.contains("flavour=chocolate"), "the cookie came back")
    }

    mutating func basicAuth() {
        step(8, "Basic authentication", #"open(…, user: "alice", password: …, auth: "BASIC")"#)
        authenticate(path: "/basic", scheme: "BASIC")
    }

    mutating func digestAuth() {
        step(9, "Digest authentication (MD5, qop=auth): the 401 round is invisible to the ready states", #"auth: "DIGEST""#)
        authenticate(path: "/digest", scheme: "DIGEST")
    }

    private mutating func authenticate(path: String, scheme: String) {
        let anonymous = HttpRequest()
        anonymous.open("GET", url: base + path)
        anonymous.send(timeout: 10)
        check(anonymous.getStatus() == 401, "without credentials: \(anonymous.getStatus())")
        let wrong = HttpRequest()
        wrong.open("GET", url: base + path, user: DemoServer.user, password: "guess", auth: scheme)
        wrong.send(timeout: 10)
        check(wrong.getStatus() == 401, "a wrong password: \(wrong.getStatus())")
        let right = HttpRequest()
        let watcher = runAsync(right) {
            $0.open("GET", url: base + path, async: true, user: DemoServer.user, password: DemoServer.password, auth: scheme)
        }
        let states = watcher.states.withLock { $0 }
        print("   server: \(Tour.text(watcher.body.withLock { $0 }))")
        check(right.getStatus() == 200 && states.filter { $0 == .headersReceived }.count == 1,
              "the right password: 200, one HEADERS_RECEIVED")
    }
}

/// Records what an asynchronous request reports.
final class Watcher: HttpRequestDelegate {
    struct Piece: Sendable {
        let milliseconds: Int
        let text: String
    }
    let states = Mutex<[HttpRequest.State]>([])
    let pieces = Mutex<[Piece]>([])
    let body = Mutex(Data())
    let done = DispatchSemaphore(value: 0)
    private let started = Date()

    func onStatusChange(_ request: HttpRequest) {
        let state = request.getState()
        states.withLock { $0.append(state) }
        if state == .loading || state == .done {
            let data = request.getReceiveBuffer()
            body.withLock { $0.append(data) }
            if state == .loading {
                pieces.withLock { $0.append(Piece(milliseconds: Int(Date().timeIntervalSince(started) * 1000), text: Tour.text(data))) }
            }
        }
        if state == .done { done.signal() }
    }
}
