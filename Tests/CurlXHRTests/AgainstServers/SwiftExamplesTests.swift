import Foundation
import Testing

/// The Swift examples (examples/swift), built with the package, run against the loopback servers
/// as their comments say to run them.
@Suite(.ownThreads) struct SwiftExamplesTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    func run(_ example: String, _ arguments: [String]) throws -> Shell.Result {
        try Shell.run(TestEnvironment.builtProduct(example), arguments)
    }

    @Test func synchronousRequestsFromWorkerThreads() throws {
        let result = try run("example-workers", [try env.httpURL + "/files/100b", "4", "25"])
        #expect(result.status == 0 && result.output.contains("100 passed, 0 failed"), "\(result.output)")
    }

    @Test func anAsynchronousRequestWithADelegate() throws {
        let result = try run("example-delegate", [try env.faultURL + "/drip?chunks=3&size=10&interval_ms=20"])
        let states = result.output.split(separator: "\n").map { $0.split(separator: " ").first.map(String.init) ?? "" }
        #expect(result.status == 0 && Array(states.prefix(3)) == ["OPENED", "SENT", "HEADERS_RECEIVED"] && states.last == "DONE",
                "\(result.output)")
        #expect(result.output.contains("DONE status 200, 30 bytes so far"))
    }

    @Test func asyncAwaitReadsTheBodyAsItComes() throws {
        let result = try run("example-await", [try env.httpURL + "/files/10k"])
        #expect(result.status == 0 && result.output == "HTTP/1.1 200 OK\nbody: 10240 bytes\n", "\(result.output)")
    }

    @Test func theClientSendsArgumentsAndDecodesJSON() throws {
        let result = try run("example-client", [try env.faultURL])
        #expect(result.status == 0 && result.output == "GET /echo q=swift&page=2&tag=a&tag=b\n", "\(result.output)")
    }
}
