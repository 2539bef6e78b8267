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
