// A first look at CurlXHR: one synchronous and one asynchronous GET, printing every ready
// state. Usage: xhr-example URL
import CurlXHR
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    print("usage: xhr-example URL")
    exit(2)
}
let url = arguments[1]

print("== synchronous GET \(url)")
let request = HttpRequest()
guard request.open("GET", url: url) else {
    print("open refused: \(request.lastError?.message ?? "?")")
    exit(1)
}
print("state after open: \(request.getState())")
request.send()
print("state after send: \(request.getState())")
print("status: \(request.getStatus()) \(request.getStatusText() ?? "")")
print("body: \(request.getReceiveBuffer().count) bytes")

print("\n== asynchronous GET \(url)")
let finished = DispatchSemaphore(value: 0)
let asyncRequest = HttpRequest()
asyncRequest.onStatusChange = { request in
    let state = request.getState()
    switch state {
    case .headersReceived:
        print("  \(state): \(request.getStatus()) \(request.getStatusText() ?? "")")
    case .loading:
        print("  \(state): +\(request.getReceiveBuffer().count) bytes")
    case .done:
        print("  \(state): status \(request.getStatus()), +\(request.getReceiveBuffer().count) bytes")
        finished.signal()
    default:
        print("  \(state)")
    }
}
asyncRequest.open("GET", url: url, async: true)
asyncRequest.send()
finished.wait()
exit(asyncRequest.getStatus() == 0 ? 1 : 0)
