import CurlXHR
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// curl's --write-out: `%{variable}`, `%header{name}`, `%%`, and the `\n`, `\r`, `\t`
/// escapes, with curl's formatting of each value.
enum WriteOut {
    /// Writes `format` with `values` to standard output (standard error after `%{stderr}`);
    /// an unknown variable prints nothing and a warning, as curl does.
    static func print(_ format: String, values: [String: String], header: (String) -> String?, console: Console) {
        var toStandardError = false
        var pending = ""
        func flush() {
            guard !pending.isEmpty else { return }
            StandardStreams.write(pending, to: toStandardError ? 2 : 1)
            pending = ""
        }
        let scalars = Array(format.unicodeScalars)
        var index = 0
        func text(_ range: Range<Int>) -> String {
            var string = ""
            string.unicodeScalars.append(contentsOf: scalars[range])
            return string
        }
        /// The index of the `}` closing a name that starts at `start`, if any.
        func closing(from start: Int) -> Int? {
            scalars[start...].firstIndex(of: "}")
        }
        while index < scalars.count {
            let scalar = scalars[index]
            let next = index + 1 < scalars.count ? scalars[index + 1] : nil
            if scalar == "%", let next {
                if next == "%" {
                    pending += "%"
                    index += 2
                } else if next == "{" {
                    guard let end = closing(from: index + 2) else {
                        pending += "%{"
                        index += 2
                        continue
                    }
                    let name = text(index + 2 ..< end)
                    index = end + 1
                    switch name {
                    case "stdout": flush(); toStandardError = false
                    case "stderr": flush(); toStandardError = true
                    default:
                        if let value = values[name] {
                            pending += value
                        } else {
                            console.warn("unknown --write-out variable: '\(name)'")
                        }
                    }
                } else if text(index + 1 ..< min(index + 8, scalars.count)) == "header{" {
                    guard let end = closing(from: index + 8) else {
                        pending += "%header{"
                        index += 8
                        continue
                    }
                    pending += header(text(index + 8 ..< end)) ?? ""
                    index = end + 1
                } else {
                    pending.unicodeScalars.append(contentsOf: [scalar, next])
                    index += 2
                }
            } else if scalar == "\\", let next {
                switch next {
                case "n": pending += "\n"
                case "r": pending += "\r"
                case "t": pending += "\t"
                default: pending.unicodeScalars.append(contentsOf: [scalar, next])
                }
                index += 2
            } else {
                pending.unicodeScalars.append(scalar)
                index += 1
            }
        }
        flush()
    }

    /// `%{json}`: every variable in one JSON object, numbers as numbers (as curl's).
    static func json(_ values: [String: String]) -> String {
        let numeric: Set<String> = ["http_code", "response_code", "num_redirects", "num_retries", "num_connects", "exitcode",
                                    "remote_port", "local_port", "size_download", "size_upload", "size_header",
                                    "speed_download", "speed_upload", "time_namelookup", "time_connect", "time_appconnect",
                                    "time_pretransfer", "time_starttransfer", "time_redirect", "time_total", "time_queue"]
        // Strings curl leaves out when empty: null.
        let nullable: Set<String> = ["content_type", "errormsg"]
        let members = values.mapValues { value in JSONValue(value, numeric: false) }
            .merging(values.filter { numeric.contains($0.key) }.mapValues { JSONValue($0, numeric: true) }) { $1 }
            .merging(values.filter { nullable.contains($0.key) && $0.value.isEmpty }.mapValues { _ in JSONValue.null }) { $1 }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(members)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// A -w value in %{json}: a number where curl writes one, else a string.
    enum JSONValue: Encodable {
        case number(Double)
        case integer(Int)
        case text(String)
        case null

        init(_ value: String, numeric: Bool) {
            if numeric, let integer = Int(value) { self = .integer(integer) }
            else if numeric, let number = Double(value) { self = .number(number) }
            else { self = .text(value) }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .number(let number): try container.encode(number)
            case .integer(let integer): try container.encode(integer)
            case .text(let text): try container.encode(text)
            case .null: try container.encodeNil()
            }
        }
    }

    /// curl's times: seconds with six decimals (microseconds, truncated); 0.000000 unknown.
    static func seconds(_ value: Double?) -> String {
        let microseconds = max(0, Int64(((value ?? 0) * 1_000_000).rounded(.down)))
        let fraction = String(microseconds % 1_000_000)
        return "\(microseconds / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }

    /// curl's %{http_version}: "1.0", "1.1", "2", "3"; "0" when unknown.
    static func version(_ httpVersion: String?) -> String {
        guard let httpVersion, httpVersion.hasPrefix("HTTP/") else { return "0" }
        return String(httpVersion.dropFirst("HTTP/".count))
    }
}

/// What -w writes for one transfer of a fetch.
extension Fetch {
    /// -w's format: as given, or the file `@path` names.
    func writeOutFormat(console: Console) throws -> String? {
        guard let writeOut else { return nil }
        guard writeOut.hasPrefix("@") else { return writeOut }
        return String(decoding: try Self.contents(writeOut, console: console), as: UTF8.self)
    }

    /// -w's variables for `request`, as curl names and formats them.
    func writeOutValues(_ request: HttpRequest, session: Session, url: String, outcome: Outcome?) -> [String: String] {
        let metrics = request.getMetrics()
        let status = Fixed.padded(String(request.getStatus()), to: 3, left: true, fill: "0")
        // curl's average speeds: bytes a second over the whole transfer, whole bytes.
        func speed(_ bytes: Int64) -> String {
            guard let total = metrics.totalTime, total > 0 else { return "0" }
            return String(Int64(Double(bytes) / total))
        }
        let sent = metrics.bytesSent ?? 0
        var values: [String: String] = [
            "http_code": status,
            "response_code": status,
            "http_version": WriteOut.version(metrics.httpVersion),
            "content_type": request.getResponseHeader("Content-Type") ?? "",
            "method": metrics.effectiveMethod ?? effectiveMethod,
            "scheme": String(url.prefix { $0 != ":" }).uppercased(),
            "url": url,
            "url_effective": metrics.effectiveURL ?? url,
            "num_redirects": String(metrics.redirectCount),
            "num_retries": String(metrics.retryCount),
            "num_connects": String(metrics.connectionsOpened),
            "exitcode": String(outcome?.code ?? 0),
            "errormsg": outcome?.message ?? "",
            "time_namelookup": WriteOut.seconds(metrics.nameLookupTime),
            "time_connect": WriteOut.seconds(metrics.connectTime),
            "time_appconnect": WriteOut.seconds(metrics.tlsTime),
            "time_pretransfer": WriteOut.seconds(metrics.preTransferTime),
            "time_starttransfer": WriteOut.seconds(metrics.startTransferTime),
            "time_redirect": WriteOut.seconds(metrics.redirectTime),
            "time_total": WriteOut.seconds(metrics.totalTime),
            "time_queue": WriteOut.seconds(metrics.queueTime),
            "remote_ip": metrics.remoteAddress ?? "",
            "remote_port": metrics.remotePort.map(String.init) ?? "",
            "local_ip": metrics.localAddress ?? "",
            "local_port": metrics.localPort.map(String.init) ?? "",
            "size_download": String(session.written),
            "size_upload": String(sent),
            "size_header": String(metrics.headerBytes ?? 0),
            "speed_download": speed(session.written),
            "speed_upload": speed(sent),
        ]
        values["json"] = WriteOut.json(values)
        return values
    }
}
