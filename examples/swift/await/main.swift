// async/await: the response arrives at its head; the body is an AsyncSequence read as it
// comes (cancelling the task would stop the transfer).
//   swift run example-await URL
import CurlXHR
import Foundation

@main
struct Example {
    static func main() async {
        guard CommandLine.arguments.count == 2 else {
            FileHandle.standardError.write(Data("usage: example-await URL\n".utf8))
            exit(2)
        }
        let request = HttpRequest()
        guard request.open("GET", url: CommandLine.arguments[1]) else {
            print("refused: \(request.lastError?.message ?? "")")
            exit(1)
        }
        do {
            let response = try await request.response(timeout: 30)
            print("\(response.httpVersion ?? "HTTP") \(response.status) \(response.statusText)")
            var bytes = 0
            for try await chunk in response.body { bytes += chunk.count }
            print("body: \(bytes) bytes")
        } catch {
            print("failed: \(error)")
            exit(1)
        }
    }
}
