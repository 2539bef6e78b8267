// The client layer: a base URL, HTTP-RPC's arguments, and the JSON answer decoded into a type.
//   swift run example-client BASE-URL
import CurlXHRClient
import Foundation

/// What the loopback test server's /echo answers (part of it).
struct Echo: Decodable, Sendable {
    let method: String
    let path: String
    let query: [[String]]
}

@main
struct Example {
    static func main() async {
        guard CommandLine.arguments.count == 2 else {
            FileHandle.standardError.write(Data("usage: example-client BASE-URL\n".utf8))
            exit(2)
        }
        let client = HttpClient(baseURL: CommandLine.arguments[1], headerFields: [.accept: "application/json"])
        do {
            let echo: Echo = try await client.invoke("GET", path: "echo", arguments: [("q", "swift"), ("page", 2), ("tag", ["a", "b"])])
            print("\(echo.method) \(echo.path) \(echo.query.map { $0.joined(separator: "=") }.joined(separator: "&"))")
        } catch {
            print("failed: \(error)")
            exit(1)
        }
    }
}
