import HTTPTypes

/// Header fields given as text (the deprecated `headers:` spellings, ``HttpClientRequest/setHeader(_:value:)``)
/// become `HTTPFields`; a field no `HTTPFields` can hold as given (a name that is no token, a
/// value with CR, LF or NUL, which `HTTPFields` would turn into spaces) is kept aside, and the
/// call is refused naming it, as `HttpRequest.setRequestHeader(_:value:)` refuses it.
struct HeaderFieldList: Sendable {
    var fields = HTTPFields()
    var refused: [(name: String, value: String)] = []

    init(_ fields: HTTPFields) {
        self.fields = fields
    }

    init(_ pairs: [(name: String, value: String)]) {
        for (name, value) in pairs { append(name, value: value) }
    }

    mutating func append(_ name: String, value: String) {
        guard let fieldName = HTTPField.Name(name), HTTPField.isValidValue(value) else {
            refused.append((name, value))
            return
        }
        fields.append(HTTPField(name: fieldName, value: value))
    }

    /// `fields` as name and value pairs, in order.
    static func pairs(_ fields: HTTPFields) -> [(name: String, value: String)] {
        fields.map { ($0.name.rawName, $0.value) }
    }
}
