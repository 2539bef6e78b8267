@testable import CurlXHR
import Foundation
import Testing

/// A delegate that records what a user of an asynchronous request sees: every reported
/// state (as `getState()` returns it inside the callback), the status when headers arrive,
/// and the body drained from LOADING and DONE.
final class Recorder: HttpRequestDelegate {
    struct Seen {
        var states: [HttpRequest.State] = []
        var body = Data()
        var statusAtHeaders: Int?
        var statusAtDone: Int?
        var textAtDone: String?
        var callbacksAfterDone = 0
    }

    private let seen = Locked(Seen())
    private let finished = DispatchSemaphore(value: 0)
    /// Runs inside each callback, after recording, for tests that act from a callback.
    let action: (@Sendable (HttpRequest, HttpRequest.State) -> Void)?

    init(action: (@Sendable (HttpRequest, HttpRequest.State) -> Void)? = nil) {
        self.action = action
    }

    func onStatusChange(_ request: HttpRequest) {
        let state = request.getState()
        let data = state == .loading || state == .done ? request.getReceiveBuffer() : Data()
        let status = request.getStatus()
        let text = request.getStatusText()
        let first = seen.withLock { seen -> Bool in
            if seen.states.last == .done { seen.callbacksAfterDone += 1 }
            seen.states.append(state)
            seen.body.append(data)
            if state == .headersReceived { seen.statusAtHeaders = status }
            guard state == .done, seen.statusAtDone == nil else { return false }
            seen.statusAtDone = status
            seen.textAtDone = text
            return true
        }
        action?(request, state)
        if first { finished.signal() }
    }

    /// Waits for the first DONE; false if it did not come within `seconds`. May be called again.
    func waitForDone(seconds: Double = 30) -> Bool {
        guard finished.wait(timeout: .now() + seconds) == .success else { return false }
        finished.signal()  // for the next caller
        return true
    }

    var result: Seen { seen.withLock { $0 } }
}

/// Opens and sends an asynchronous request, and waits for DONE.
@discardableResult
func fetchAsync(_ method: String, _ url: String, body: Data? = nil, configure: (HttpRequest) -> Void = { _ in },
                timeout: Double = 0, sourceLocation: SourceLocation = #_sourceLocation) -> (HttpRequest, Recorder.Seen) {
    let request = HttpRequest()
    let recorder = Recorder()
    request.delegate = recorder
    #expect(request.open(method, url: url, async: true), "open: \(request.lastError?.message ?? "")", sourceLocation: sourceLocation)
    configure(request)
    #expect(request.sendData(body, timeout: timeout), "send: \(request.lastError?.message ?? "")", sourceLocation: sourceLocation)
    #expect(recorder.waitForDone(), "no DONE within 30 s", sourceLocation: sourceLocation)
    return (request, recorder.result)
}

/// Opens and sends a synchronous request; returns the request in DONE and its body.
@discardableResult
func fetchSync(_ method: String, _ url: String, body: Data? = nil, configure: (HttpRequest) -> Void = { _ in },
               timeout: Double = 0, sourceLocation: SourceLocation = #_sourceLocation) -> (HttpRequest, Data) {
    let request = HttpRequest()
    #expect(request.open(method, url: url), "open: \(request.lastError?.message ?? "")", sourceLocation: sourceLocation)
    configure(request)
    #expect(request.sendData(body, timeout: timeout), "send: \(request.lastError?.message ?? "")", sourceLocation: sourceLocation)
    #expect(request.getState() == .done, sourceLocation: sourceLocation)
    return (request, request.getReceiveBuffer())
}

/// What the echo CGI reports about the request it received.
struct Echo {
    let json: [String: Any]

    init(_ data: Data, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let object = try JSONSerialization.jsonObject(with: data)
        json = try #require(object as? [String: Any], sourceLocation: sourceLocation)
    }

    var method: String? { json["method"] as? String }
    var bodyLength: Int? { json["body_length"] as? Int }
    var bodySHA256: String? { json["body_sha256"] as? String }
    var body: Data? { (json["body_b64"] as? String).flatMap { Data(base64Encoded: $0) } }
    var headers: [String: String] { json["headers"] as? [String: String] ?? [:] }

    func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }
}

/// The fault server's and the static files' body pattern: byte i is i % 251.
enum Pattern {
    static func bytes(_ count: Int, from start: Int = 0) -> Data {
        Data((start..<start + count).map { UInt8($0 % 251) })
    }

    /// Checks `data` continues the pattern at `offset` without building the expected bytes.
    static func matches(_ data: Data, at offset: Int) -> Bool {
        var index = offset
        for byte in data {
            if byte != UInt8(index % 251) { return false }
            index += 1
        }
        return true
    }
}
