/// curl's URL globbing: `{a,b}` sets and `[1-3]`, `[01-10]`, `[a-c]`, `[0-100:10]` ranges make
/// one URL per combination, the leftmost changing slowest; `#N` in -o stands for the Nth
/// pattern's value. A bracketed IPv6 address is not a range.
struct URLGlob {
    /// Pieces of a URL: text, or the values of one pattern.
    private enum Piece {
        case text(String)
        case values([String])
    }

    /// More URLs than this from one argument are refused (never hang expanding `[1-100000000]`).
    static let maxURLs = 100_000

    /// One URL of the expansion and the values its patterns took, for #N.
    struct Item {
        let url: String
        let values: [String]
    }

    static func expand(_ url: String) throws -> [Item] {
        let pieces = try parse(url)
        var count = 1
        for case .values(let values) in pieces {
            let (product, overflow) = count.multipliedReportingOverflow(by: values.count)
            guard !overflow, product <= maxURLs else {
                throw ValidationError("the URL '\(url)' expands to more than \(maxURLs) URLs (-g takes [] and {} as they are)", code: 3)
            }
            count = product
        }
        var items = [Item(url: "", values: [])]
        for piece in pieces {
            switch piece {
            case .text(let text): items = items.map { Item(url: $0.url + text, values: $0.values) }
            case .values(let values): items = items.flatMap { item in values.map { Item(url: item.url + $0, values: item.values + [$0]) } }
            }
        }
        return items
    }

    /// `template` with `#N` replaced by the Nth value (from 1); other `#` stay.
    static func fill(_ template: String, with values: [String]) -> String {
        var result = ""
        var rest = Substring(template)
        while let hash = rest.firstIndex(of: "#") {
            result += rest[..<hash]
            let digits = rest[rest.index(after: hash)...].prefix { $0.isASCII && $0.isNumber }
            if let number = Int(digits), number >= 1, number <= values.count {
                result += values[number - 1]
            } else {
                result += "#" + digits
            }
            rest = rest[digits.endIndex...]
            if digits.isEmpty { rest = rest.dropFirst() }
        }
        return result + rest
    }

    private static func parse(_ url: String) throws -> [Piece] {
        var pieces: [Piece] = []
        var text = ""
        var rest = Substring(url)
        while let character = rest.popFirst() {
            switch character {
            case "\\" where rest.first.map { "[]{}".contains($0) } == true:
                text.append(rest.removeFirst())
            case "{", "[":
                let close: Character = character == "{" ? "}" : "]"
                guard let end = rest.firstIndex(of: close) else { throw bad(url, "an unmatched \(character)") }
                let inside = rest[..<end]
                rest = rest[rest.index(after: end)...]
                if character == "[", isIPv6(inside) {
                    text += "[" + inside + "]"
                    continue
                }
                if !text.isEmpty { pieces.append(.text(text)); text = "" }
                pieces.append(.values(character == "{" ? try set(inside, url) : try range(inside, url)))
            case "}", "]":
                throw bad(url, "an unmatched \(character)")
            default:
                text.append(character)
            }
        }
        if !text.isEmpty { pieces.append(.text(text)) }
        return pieces
    }

    private static func bad(_ url: String, _ what: String) -> ValidationError {
        ValidationError("bad URL pattern in '\(url)': \(what) (-g takes [] and {} as they are)", code: 3)
    }

    private static func isIPv6(_ text: Substring) -> Bool {
        text.contains(":") && text.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." || $0 == "%" }
    }

    private static func set(_ inside: Substring, _ url: String) throws -> [String] {
        guard !inside.contains("{"), !inside.contains("[") else { throw bad(url, "a nested pattern") }
        return inside.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    }

    /// `1-10`, `01-10` (as wide as the first), `a-z`, each with an optional `:STEP`.
    private static func range(_ inside: Substring, _ url: String) throws -> [String] {
        let parts = inside.split(separator: ":", maxSplits: 1)
        var step = 1
        if parts.count == 2 {
            guard let given = Int(parts[1]), given >= 1 else { throw bad(url, "a bad step in [\(inside)]") }
            step = given
        }
        let bounds = parts.first?.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false) ?? []
        guard bounds.count == 2 else { throw bad(url, "a bad range [\(inside)]") }
        if let low = Int(bounds[0]), let high = Int(bounds[1]), low >= 0, low <= high {
            guard (high - low) / step < maxURLs else {
                throw ValidationError("the URL '\(url)' expands to more than \(maxURLs) URLs (-g takes [] and {} as they are)", code: 3)
            }
            let width = bounds[0].hasPrefix("0") ? bounds[0].count : 0
            return stride(from: low, through: high, by: step).map { Fixed.padded(String($0), to: width, left: true, fill: "0") }
        }
        guard bounds[0].count == 1, bounds[1].count == 1, let low = bounds[0].first?.asciiValue, let high = bounds[1].first?.asciiValue,
              low <= high, bounds[0].first!.isLetter, bounds[1].first!.isLetter else {
            throw bad(url, "a bad range [\(inside)]")
        }
        return stride(from: low, through: high, by: step).map { String(UnicodeScalar($0)) }
    }
}
