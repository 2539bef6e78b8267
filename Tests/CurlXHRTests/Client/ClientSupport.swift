import CurlXHR
import CurlXHRClient
import Foundation
import Testing

/// What the fault server's `/echo` saw of a request.
struct EchoedRequest: Decodable, Sendable {
    var method: String
    var target: String
    var path: String
    /// Decoded query pairs, in order.
    var query: [[String]]
    var headers: [[String]]
    var body: String
    var bodyLength: Int
    var bodySha256: String
    /// Decoded pairs of an `application/x-www-form-urlencoded` body.
    var form: [[String]]?

    /// The values of every header field named `name` (case-insensitive), in order.
    func headers(named name: String) -> [String] {
        headers.filter { $0[0].lowercased() == name.lowercased() }.map { $0[1] }
    }

    func header(_ name: String) -> String? {
        let values = headers(named: name)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }
}

/// What the fault server's `/multipart` saw of a form: each part as it arrived.
struct ReceivedForm: Decodable, Sendable {
    struct Part: Decodable, Sendable, Equatable {
        var name: String?
        var filename: String?
        var contentType: String?
        var size: Int
        var sha256: String?
    }
    var parts: [Part]
}

/// Files for a test in the environment's scratch folder, and their SHA-256 as `sha256sum`
/// computes it.
struct ScratchFiles {
    let directory: String

    init(_ env: TestEnvironment, _ prefix: String) throws {
        directory = try env.scratchPath(prefix)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func write(_ data: Data, named name: String) throws -> String {
        let path = directory + "/" + name
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    static func sha256(_ path: String) throws -> String {
        String(try Shell.run("/usr/bin/sha256sum", [path]).output.prefix(64))
    }
}

/// Runs `body` on a thread of its own (not one of the cooperative pool) and returns what it
/// returns: for the blocking calls.
func onWorkerThread<Value: Sendable>(_ body: @escaping @Sendable () throws(HttpClientError) -> Value) async -> Result<Value, HttpClientError> {
    await withCheckedContinuation { continuation in
        let thread = Thread {
            continuation.resume(returning: Result { () throws(HttpClientError) in try body() })
        }
        thread.start()
    }
}

/// A test's expectation that `body` fails with an ``HttpClientError``, which it returns.
func clientError<Value>(_ body: () async throws -> Value,
                        sourceLocation: SourceLocation = #_sourceLocation) async -> HttpClientError? {
    do {
        let value = try await body()
        Issue.record("expected an HttpClientError, got \(value)", sourceLocation: sourceLocation)
        return nil
    } catch let error as HttpClientError {
        return error
    } catch {
        Issue.record("expected an HttpClientError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// The test environment and a client of its fault server, for a suite's `init`.
func faultServerClient() throws -> (TestEnvironment, HttpClient) {
    let env = try TestEnvironment.get()
    return (env, HttpClient(baseURL: try env.faultURL))
}
