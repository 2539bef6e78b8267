import CurlXHR
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// curl's `--trace FILE`, `--trace-ascii FILE` and `--trace-time`: each request's wire
/// (``HttpRequest/onTrace``, secrets redacted) written as curl writes it: `== Info:` lines,
/// `=> Send header, N bytes (0xN)` and `<= Recv data …` headings over an offset, hex and
/// text dump (16 bytes a line), or text only (64 a line, a new line after each CR LF).
final class TraceWriter: Sendable {
    enum Style { case hex, ascii }

    private let descriptor: Int32
    private let closes: Bool
    private let style: Style
    private let withTime: Bool
    private let ended = DispatchSemaphore(value: 0)

    /// Writes to `path` ("-": standard output, "%": standard error), truncating a file.
    init(path: String, style: Style, withTime: Bool) throws {
        switch path {
        case "-": (descriptor, closes) = (1, false)
        case "%": (descriptor, closes) = (2, false)
        default:
            let opened = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard opened >= 0 else { throw ValidationError("cannot write the trace to '\(path)'") }
            (descriptor, closes) = (opened, true)
        }
        self.style = style
        self.withTime = withTime
    }

    deinit {
        if closes { close(descriptor) }
    }

    /// Traces `request`'s next send.
    func attach(_ request: HttpRequest) {
        request.onTrace = { [self] _, entry in _ = StandardStreams.write(Self.format(entry, style: style, withTime: withTime), to: descriptor) }
        request.onEvent = { [self] _, event in
            if case .done = event { ended.signal() }
        }
    }

    /// Waits until the trace of `request`'s send is written (its `.done` event follows the
    /// last entry); at once for a send that never started.
    func waitForEnd(of request: HttpRequest) {
        guard request.getState() == .done else { return }
        _ = ended.wait(timeout: .now() + 10)
    }

    /// One entry as curl's trace shows it.
    static func format(_ entry: HttpRequest.TraceEntry, style: Style, withTime: Bool) -> [UInt8] {
        var out: [UInt8] = []
        let time = withTime ? Array(timeOfDay(entry.time).utf8) : []
        let heading: String
        switch entry.kind {
        case .info:
            out += time + Array("== Info: ".utf8) + entry.bytes
            return out
        case .headerOut: heading = "=> Send header"
        case .dataOut: heading = "=> Send data"
        case .headerIn: heading = "<= Recv header"
        case .dataIn: heading = "<= Recv data"
        case .tlsIn: heading = "<= Recv SSL data"
        case .tlsOut: heading = "=> Send SSL data"
        }
        let bytes = entry.bytes
        out += time + Array("\(heading), \(bytes.count) bytes (0x\(String(bytes.count, radix: 16)))\n".utf8)
        let width = style == .ascii ? 0x40 : 0x10
        var index = 0
        while index < bytes.count {
            out += Array(hex(index, digits: 4).utf8) + Array(": ".utf8)
            if style == .hex {
                for column in 0..<width {
                    out += index + column < bytes.count ? Array((hex(Int(bytes[index + column]), digits: 2) + " ").utf8) : Array("   ".utf8)
                }
            }
            var column = 0
            var next = index + width
            while column < width, index + column < bytes.count {
                let at = index + column
                // Text only: a CR LF ends the line (and is not shown), as in curl.
                if style == .ascii, at + 1 < bytes.count, bytes[at] == 0x0D, bytes[at + 1] == 0x0A {
                    next = at + 2
                    break
                }
                out.append(bytes[at] >= 0x20 && bytes[at] < 0x80 ? bytes[at] : UInt8(ascii: "."))
                if style == .ascii, at + 2 < bytes.count, bytes[at + 1] == 0x0D, bytes[at + 2] == 0x0A {
                    next = at + 3
                    break
                }
                column += 1
            }
            out.append(UInt8(ascii: "\n"))
            index = next
        }
        return out
    }

    /// `%0Nx`.
    private static func hex(_ value: Int, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// `--trace-time`'s prefix: the local time of day, `HH:MM:SS.uuuuuu `.
    static func timeOfDay(_ seconds: Double) -> String {
        var whole = time_t(seconds.rounded(.down))
        var parts = tm()
        localtime_r(&whole, &parts)
        let micro = Int((seconds - seconds.rounded(.down)) * 1_000_000)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let fraction = String(micro)
        return "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))." + String(repeating: "0", count: 6 - fraction.count) + fraction + " "
    }
}
