import CCurlShim

/// The `Cache-Control` directives of a request or a response (RFC 9111, section 5.2): every
/// field of that name, its comma-separated members in order, names compared without case,
/// arguments as tokens or quoted strings.
struct CacheControl: Equatable, Sendable {
    struct Directive: Equatable, Sendable {
        /// Lower-cased.
        let name: String
        /// The argument, unquoted; `nil` without `=`.
        let argument: String?
    }

    /// What a directive with a delta-seconds argument says.
    enum Seconds: Equatable, Sendable {
        case absent
        case valid(Int)
        /// Present without a valid argument, or given twice with different ones: for a
        /// freshness directive, RFC 9111 asks for the response to be taken as stale.
        case invalid
    }

    private(set) var directives: [Directive] = []

    /// The directives of every `Cache-Control` field of `fields`.
    init(_ fields: [(name: String, value: String)]) {
        for field in fields where HeaderFieldNames.same(field.name, "Cache-Control") {
            directives += Self.parse(field.value)
        }
    }

    init(parsing value: String) {
        directives = Self.parse(value)
    }

    func has(_ name: String) -> Bool { directives.contains { $0.name == name } }

    /// A delta-seconds directive (`max-age`, `min-fresh`…). A value beyond 2^31 counts as
    /// 2^31 (section 1.2.2).
    func seconds(_ name: String) -> Seconds {
        var found: Int?
        for directive in directives where directive.name == name {
            guard let argument = directive.argument, let seconds = Self.deltaSeconds(argument) else { return .invalid }
            if let found, found != seconds { return .invalid }
            found = seconds
        }
        return found.map { .valid($0) } ?? .absent
    }

    /// The argument of the first directive `name`, `nil` when absent or without one.
    func argument(_ name: String) -> String? {
        directives.first { $0.name == name }?.argument
    }

    /// `1*DIGIT`, capped at 2^31.
    static func deltaSeconds(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        var value = 0
        for digit in text.utf8 {
            value = value * 10 + Int(digit - UInt8(ascii: "0"))
            if value >= 1 << 31 { return 1 << 31 }
        }
        return value
    }

    /// The members of one field value: `name`, `name=token`, `name="quoted \"string\""`.
    private static func parse(_ value: String) -> [Directive] {
        var directives: [Directive] = []
        var bytes = Array(value.utf8)[...]
        func skipSpace() { while let first = bytes.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { bytes.removeFirst() } }
        while !bytes.isEmpty {
            skipSpace()
            var name: [UInt8] = []
            while let first = bytes.first, first != UInt8(ascii: "="), first != UInt8(ascii: ","), first != UInt8(ascii: " "), first != UInt8(ascii: "\t") {
                name.append(first)
                bytes.removeFirst()
            }
            skipSpace()
            var argument: [UInt8]?
            if bytes.first == UInt8(ascii: "=") {
                bytes.removeFirst()
                skipSpace()
                var text: [UInt8] = []
                if bytes.first == UInt8(ascii: "\"") {
                    bytes.removeFirst()
                    while let first = bytes.first, first != UInt8(ascii: "\"") {
                        bytes.removeFirst()
                        if first == UInt8(ascii: "\\"), let escaped = bytes.first {
                            text.append(escaped)
                            bytes.removeFirst()
                        } else {
                            text.append(first)
                        }
                    }
                    if !bytes.isEmpty { bytes.removeFirst() }  // the closing quote
                } else {
                    while let first = bytes.first, first != UInt8(ascii: ","), first != UInt8(ascii: " "), first != UInt8(ascii: "\t") {
                        text.append(first)
                        bytes.removeFirst()
                    }
                }
                argument = text
            }
            // Anything else up to the next comma is not part of a valid member: skipped.
            while let first = bytes.first, first != UInt8(ascii: ",") { bytes.removeFirst() }
            if !bytes.isEmpty { bytes.removeFirst() }
            if !name.isEmpty {
                directives.append(Directive(name: String(decoding: name, as: UTF8.self).lowercased(),
                                            argument: argument.map { String(decoding: $0, as: UTF8.self) }))
            }
        }
        return directives
    }
}

/// Header fields looked up as HTTP compares their names: ASCII letters without case. The
/// cache's rules and the client layer share it.
package enum HeaderFieldNames {
    package static func same(_ one: String, _ other: String) -> Bool {
        MessageValidation.sameFieldName(one.utf8, other.utf8)
    }

    /// Every value of the fields named `name`, joined with ", "; `nil` when there is none.
    package static func value(_ name: String, in fields: [(name: String, value: String)]) -> String? {
        let values = fields.filter { same($0.name, name) }.map(\.value)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// `text` without the spaces and tabs around it.
    static func trimmed<Text: StringProtocol>(_ text: Text) -> String {
        let bytes = Array(text.utf8)
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let start = bytes.firstIndex(where: { !isSpace($0) }), let end = bytes.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(decoding: bytes[start...end], as: UTF8.self)
    }

    /// The first field named `name`.
    static func first(_ name: String, in fields: [(name: String, value: String)]) -> String? {
        fields.first { same($0.name, name) }?.value
    }

    /// An HTTP date (IMF-fixdate, RFC 850 or asctime) in seconds since 1970, by libcurl's
    /// `curl_getdate`; `nil` when it is not one.
    static func date(_ name: String, in fields: [(name: String, value: String)]) -> Double? {
        guard let text = first(name, in: fields) else { return nil }
        let seconds = curl_getdate(text, nil)
        return seconds == -1 ? nil : Double(seconds)
    }
}
