import CurlXHR
import HTTPTypes

/// The header fields of a client or a call: `HTTPFields`, and beside them the fields given as
/// text (the deprecated `headers:` spellings, ``HttpClientRequest/setHeader(_:value:)``) that no
/// `HTTPFields` can hold as given (a name that is no token, a value with CR, LF or NUL, which
/// `HTTPFields` would turn into spaces). Those are kept as given, and the call is refused naming
/// the first, as `HttpRequest.setRequestHeader(_:value:)` refuses it.
struct HeaderFieldList: Sendable {
    var fields = HTTPFields()
    var refused: [(name: String, value: String)] = []

    init(_ fields: HTTPFields) {
        self.fields = fields
    }

    init(_ pairs: [(name: String, value: String)]) {
        for (name, value) in pairs { append(name, value: value) }
    }

    /// No field at all.
    var isEmpty: Bool { fields.isEmpty && refused.isEmpty }

    /// Every field as name and value pairs: those `HTTPFields` holds, in order, then the refused.
    var pairs: [(name: String, value: String)] {
        fields.map { ($0.name.rawName, $0.value) } + refused
    }

    mutating func append(_ name: String, value: String) {
        // HTTPField makes a value with bytes no field may hold into another: such a value is
        // refused instead (checked once, by HTTPField).
        guard let fieldName = HTTPField.Name(name), case let field = HTTPField(name: fieldName, value: value), field.value == value else {
            refused.append((name, value))
            return
        }
        fields.append(field)
    }

    /// Replaces every field named `name` (case aside) with one of `value`; `nil` removes them.
    mutating func set(_ name: String, value: String?) {
        refused.removeAll { HeaderFieldNames.same($0.name, name) }
        if let fieldName = HTTPField.Name(name) { fields[fields: fieldName] = [] }
        if let value { append(name, value: value) }
    }

    /// Replaces every field named `name` with one of `value` (kept apart, as a refused field,
    /// when `HTTPFields` cannot hold the value).
    mutating func set(_ name: HTTPField.Name, value: String) {
        if !refused.isEmpty { refused.removeAll { HeaderFieldNames.same($0.name, name.rawName) } }
        if !fields.isEmpty, fields[name] != nil { fields[fields: name] = [] }
        let field = HTTPField(name: name, value: value)
        if field.value == value { fields.append(field) } else { refused.append((name.rawName, value)) }
    }

    /// These fields, then `other`'s.
    static func + (list: HeaderFieldList, other: HeaderFieldList) -> HeaderFieldList {
        var joined = list
        joined.fields.append(contentsOf: other.fields)
        joined.refused += other.refused
        return joined
    }
}
