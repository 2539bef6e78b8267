import Foundation
import Testing

/// A program that exits with requests in flight exits cleanly, every time: no abort in the
/// libraries' finalisers (libkrb5's, libgssapi's, OpenSSL's) while the engine thread works.
@Suite(.ownThreads) struct ExitTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    @Test func exitingWithFiftyRequestsInFlightIsCleanEveryTime() throws {
        let probe = TestEnvironment.builtProduct("curlxhr-probe")
        let url = try env.faultURL + "/drip?chunks=20&size=100&interval_ms=10"
        // One HTTPS request among them, so TLS is in use at exit too.
        let https = try env.httpsURL + "/files/100b"
        let deadline = Date().addingTimeInterval(60)
        var runs = 0
        var failures: [String] = []
        while runs < 300, Date() < deadline {
            let result = try Shell.run(probe, ["exit-in-flight", url, "50", https])
            if result.status != 0 { failures.append("run \(runs): status \(result.status): \(result.output.suffix(300))") }
            runs += 1
        }
        // A process built with ThreadSanitizer (CURLXHR_SANITIZER) starts several times slower.
        let enough = ProcessInfo.processInfo.environment["CURLXHR_SANITIZER"] == nil ? 100 : 25
        #expect(runs >= enough, "only \(runs) runs in 60 s")
        #expect(failures.isEmpty, "\(failures.count) of \(runs) exits failed; first: \(failures.first ?? "")")
    }
}
