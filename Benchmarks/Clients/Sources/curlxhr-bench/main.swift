// CurlXHR as a benchmark client, used the way an application would use it.
//
// --mode async (client "curlxhr"): `concurrency` HttpRequest objects opened with
//     async: true. Each one's onStatusChange drains getReceiveBuffer() on LOADING and DONE
//     (counting the bytes, keeping none) and, on DONE, records the outcome and re-opens and
//     re-sends the same object. Callbacks run on the library's default callback queue.
// --mode threads (client "curlxhr-sync"): `concurrency` threads, each with one HttpRequest
//     opened with async: false, calling send() (which blocks until DONE) in a loop and then
//     taking the whole body with getReceiveBuffer().
//
// Library defaults throughout (enablePipelining, cookies, redirects).
import BenchSupport
import CurlXHR
import Dispatch
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

let options = {
    var options = BenchOptions.parse(client: "curlxhr")
    if options.mode == .threads && options.client == "curlxhr" { options.client = "curlxhr-sync" }
    return options
}()
let tally = Tally(options)
let body = Data(bodyBytes(options.postBytes))

/// Opens and sends `request`; returns the reason when the library refused.
func openAndSend(_ request: HttpRequest, async: Bool) -> String? {
    guard request.open(options.method, url: options.url, async: async) else {
        return "open refused: \(request.lastError.map { "\($0)" } ?? "?")"
    }
    for (name, value) in benchRequestHeaders.prefix(options.headers) {
        guard request.setRequestHeader(name, value: value) else { return "setRequestHeader refused \(name)" }
    }
    let sent = options.postBytes > 0 ? request.sendData(body) : request.send()
    return sent ? nil : "send refused: \(request.lastError.map { "\($0)" } ?? "?")"
}

/// Why a request that reached DONE failed, if the library said.
func failure(_ request: HttpRequest) -> String? {
    request.getStatus() == 0 ? "status 0: \(request.getStatusText() ?? "no text")" : nil
}

switch options.mode {
case .async:
    /// One request object and the body bytes counted for its current request. Touched by the
    /// thread that sends and then only by its callbacks, which run one at a time.
    final class Slot: @unchecked Sendable {
        let request = HttpRequest()
        var received = 0
    }
    let allDone = DispatchSemaphore(value: 0)
    let busySlots = Mutex(options.concurrency)

    /// Starts the slot's next request, or retires the slot when the run is over.
    @Sendable func issue(_ slot: Slot) {
        while tally.claim() {
            slot.received = 0
            guard let refusal = openAndSend(slot.request, async: true) else { return }
            tally.finish(status: 0, bodyBytes: 0, problem: refusal)
        }
        if busySlots.withLock({ busy -> Int in busy -= 1; return busy }) == 0 { allDone.signal() }
    }

    let slots = (0..<options.concurrency).map { _ in Slot() }
    for slot in slots {
        slot.request.onStatusChange = { request in
            switch request.getState() {
            case .loading:
                slot.received += request.getReceiveBuffer().count
            case .done:
                slot.received += request.getReceiveBuffer().count
                tally.finish(status: request.getStatus(), bodyBytes: slot.received, problem: failure(request))
                issue(slot)
            default:
                break
            }
        }
    }
    for slot in slots { issue(slot) }
    allDone.wait()

case .threads:
    runOnThreads(options.concurrency) { _ in
        let request = HttpRequest()
        while tally.claim() {
            if let refusal = openAndSend(request, async: false) {
                tally.finish(status: 0, bodyBytes: 0, problem: refusal)
                continue
            }
            tally.finish(status: request.getStatus(), bodyBytes: request.getReceiveBuffer().count,
                         problem: failure(request))
        }
    }
}
tally.report()
