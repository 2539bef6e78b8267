// The memory benchmark of CurlXHR: how much a program's resident memory grows over N small
// synchronous GETs, one at a time.
//
//   curlxhr-memory URL [N=200] [started|cold]
//
// Each GET is a new HttpRequest: open("GET", url), send() (blocks until DONE), then
// getReceiveBuffer() takes the body. A request is an error unless it ends with status 200 and
// a non-empty body.
//
// The baseline is the process's VmRSS (/proc/self/status) taken
//   started  after the library's engine started through a public call that sends nothing:
//            CookieStore.shared.allCookies() runs on the engine thread, so libcurl's global
//            start-up (curl_global_init: OpenSSL reading openssl.cnf), the multi and share
//            handles, the cookie jar and the engine thread exist before the baseline. The
//            comparable figure: what the requests themselves cost.
//   cold     before anything of the library ran: the growth includes that one-time start-up.
// At the baseline the peak (VmHWM) is reset (writing 5 to /proc/self/clear_refs), so the peak
// at the end is the highest resident memory while the requests ran; growth_kib is that peak
// minus the baseline. Prints one JSON line:
//   {"client":"curlxhr","workload":"memory","baseline":"started","requests":200,"errors":0,
//    "start_rss_kib","baseline_kib","baseline_hwm_kib","peak_kib","growth_kib","end_rss_kib",
//    "end_growth_kib","anon_growth_kib","file_growth_kib","threads","hwm_reset"[,"first_error"]}
// start_rss_kib is VmRSS when main began, baseline_hwm_kib the peak before the reset,
// end_rss_kib VmRSS after the last request (end_growth_kib: minus the baseline; of which
// anon_growth_kib anonymous memory (heap, stacks) and file_growth_kib file-backed pages (code
// and data of the libraries, touched for the first time)), threads the process's threads at
// the end; hwm_reset false when the peak could not be reset (then peak_kib is the peak since
// the process started).
//
// Imports only CurlXHR and Glibc (no Foundation, no BenchSupport): the program should hold
// nothing the library does not bring. The whole run is bounded by alarm(2) (SIGALRM ends it
// without a JSON line) and every request by a 30 s timeout. Exits 1 on any error.
import CurlXHR
#if canImport(Glibc)
import Glibc
#endif

/// VmRSS, VmHWM, RssAnon, RssFile and Threads of /proc/self/status (KiB; threads a count).
struct ProcessStatus {
    var rss = 0
    var hwm = 0
    var anon = 0
    var file = 0
    var threads = 0

    static func now() -> ProcessStatus {
        var status = ProcessStatus()
        let descriptor = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return status }
        defer { close(descriptor) }
        var text: [UInt8] = []
        text.reserveCapacity(4096)
        var chunk = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<64 {  // /proc/self/status is about 1.5 KiB
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            text.append(contentsOf: chunk[0..<count])
        }
        for line in text.split(separator: UInt8(ascii: "\n")) {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            var value = 0
            for byte in line[(colon + 1)...] where byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            switch String(decoding: line[..<colon], as: UTF8.self) {
            case "VmRSS": status.rss = value
            case "VmHWM": status.hwm = value
            case "RssAnon": status.anon = value
            case "RssFile": status.file = value
            case "Threads": status.threads = value
            default: break
            }
        }
        return status
    }
}

/// Resets the process's peak resident memory (VmHWM) to its current resident memory.
func resetPeak() -> Bool {
    let descriptor = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var five: UInt8 = UInt8(ascii: "5")
    return write(descriptor, &five, 1) == 1
}

func fail(_ text: String) -> Never {
    var line = "curlxhr-memory: " + text + "\n"
    line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
    exit(64)
}

func jsonString(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case _ where scalar.value < 0x20: out += " "
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

let start = ProcessStatus.now()
let arguments = CommandLine.arguments
guard arguments.count >= 2, arguments.count <= 4 else { fail("usage: curlxhr-memory URL [N=200] [started|cold]") }
let url = arguments[1]
let count = arguments.count > 2 ? Int(arguments[2]) ?? -1 : 200
guard count > 0 else { fail("N must be a positive number") }
let baselineKind = arguments.count > 3 ? arguments[3] : "started"
guard baselineKind == "started" || baselineKind == "cold" else { fail("the baseline is started or cold, not \(baselineKind)") }
// The bound of the whole run: SIGALRM's default action ends the process.
alarm(UInt32(60 + count / 10))

if baselineKind == "started" {
    // Starts the engine (curl_global_init, the multi and share handles, the cookie jar, the
    // engine thread) and waits until it ran this on its thread. Sends nothing.
    _ = CookieStore.shared.allCookies()
}
let baselineStatus = ProcessStatus.now()
let peakReset = resetPeak()
let baseline = ProcessStatus.now()

var errors = 0
var firstError: String?
for _ in 0..<count {
    let request = HttpRequest()
    var problem: String?
    if !request.open("GET", url: url) {
        problem = "open refused: \(request.lastError.map { "\($0)" } ?? "?")"
    } else if !request.send(timeout: 30) {
        problem = "send refused: \(request.lastError.map { "\($0)" } ?? "?")"
    } else {
        let received = request.getReceiveBuffer().count
        let status = request.getStatus()
        if status != 200 || received == 0 {
            problem = "status \(status), \(received) bytes: \(request.getStatusText() ?? "")"
        }
    }
    if let problem {
        errors += 1
        if firstError == nil { firstError = problem }
    }
}

let end = ProcessStatus.now()
var fields: [(String, String)] = [
    ("client", jsonString("curlxhr")),
    ("workload", jsonString("memory")),
    ("baseline", jsonString(baselineKind)),
    ("requests", "\(count)"),
    ("errors", "\(errors)"),
    ("start_rss_kib", "\(start.rss)"),
    ("baseline_kib", "\(baseline.rss)"),
    ("baseline_hwm_kib", "\(baselineStatus.hwm)"),
    ("peak_kib", "\(end.hwm)"),
    ("growth_kib", "\(end.hwm - baseline.rss)"),
    ("end_rss_kib", "\(end.rss)"),
    ("end_growth_kib", "\(end.rss - baseline.rss)"),
    ("anon_growth_kib", "\(end.anon - baseline.anon)"),
    ("file_growth_kib", "\(end.file - baseline.file)"),
    ("threads", "\(end.threads)"),
    ("hwm_reset", peakReset ? "true" : "false"),
]
if let firstError { fields.append(("first_error", jsonString(firstError))) }
var line = "{"
for (index, field) in fields.enumerated() {
    line += (index == 0 ? "\"" : ",\"") + field.0 + "\":" + field.1
}
line += "}\n"
line.withUTF8 { bytes in _ = write(1, bytes.baseAddress, bytes.count) }
exit(errors == 0 ? 0 : 1)
