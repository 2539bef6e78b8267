/// An HTTP-date read strictly, as RFC 9110 (section 5.6.7) writes one: IMF-fixdate
/// (`Sun, 06 Nov 1994 08:49:37 GMT`), or one of the obsolete forms a recipient must still
/// accept, RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`).
/// Every separator, space and digit count is as the grammar has it; only the names' case is
/// taken loosely (`THU`, `AUG`, `gmt`). For a field whose definition restricts it, where an
/// invalid date has a meaning of its own (`Expires`: already expired, RFC 9111 section 5.3);
/// libcurl's `curl_getdate`, which reads almost anything as a date, is for the others.
enum HTTPDate {
    /// The seconds since 1970 `text` names, or nil when it is no HTTP-date. `reference`
    /// (seconds since 1970, the time the date was received) resolves an RFC 850 date's
    /// two-digit year: the year within 50 years of it.
    static func seconds(_ text: String, reference: Double) -> Double? {
        let bytes = Array(HeaderFieldNames.trimmed(text).utf8)
        guard bytes.count <= 40 else { return nil }
        var reader = Reader(bytes: bytes[...])
        if let comma = bytes.firstIndex(of: UInt8(ascii: ",")) {
            let dayName = bytes[..<comma]
            if dayName.count == 3 {
                // IMF-fixdate: day-name "," SP day SP month SP year SP time SP "GMT"
                guard dayNames.contains(lowercased(dayName)) else { return nil }
                reader.bytes = bytes[(comma + 1)...]
                guard reader.take(" "), let day = reader.digits(2), reader.take(" "), let month = reader.month(), reader.take(" "),
                      let year = reader.digits(4), reader.take(" "), let time = reader.time(), reader.take(" GMT"), reader.bytes.isEmpty else { return nil }
                return seconds(year: year, month: month, day: day, time: time)
            }
            // rfc850-date: day-name-l "," SP day "-" month "-" 2DIGIT SP time SP "GMT"
            guard longDayNames.contains(lowercased(dayName)) else { return nil }
            reader.bytes = bytes[(comma + 1)...]
            guard reader.take(" "), let day = reader.digits(2), reader.take("-"), let month = reader.month(), reader.take("-"),
                  let shortYear = reader.digits(2), reader.take(" "), let time = reader.time(), reader.take(" GMT"), reader.bytes.isEmpty else { return nil }
            return seconds(year: fullYear(shortYear, reference: reference), month: month, day: day, time: time)
        }
        // asctime-date: day-name SP month SP ( 2DIGIT / ( SP DIGIT ) ) SP time SP year
        guard bytes.count >= 3, dayNames.contains(lowercased(bytes[..<3])) else { return nil }
        reader.bytes = bytes[3...]
        guard reader.take(" "), let month = reader.month(), reader.take(" ") else { return nil }
        let day = reader.take(" ") ? reader.digits(1) : reader.digits(2)
        guard let day, reader.take(" "), let time = reader.time(), reader.take(" "), let year = reader.digits(4), reader.bytes.isEmpty else { return nil }
        return seconds(year: year, month: month, day: day, time: time)
    }

    static let dayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    static let longDayNames = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    static let monthNames = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The bytes of a date being read, from the front.
    private struct Reader {
        var bytes: ArraySlice<UInt8>

        /// Takes `literal` (its letters in any case) when the bytes start with it.
        mutating func take(_ literal: String) -> Bool {
            let expected = Array(literal.utf8)
            guard bytes.count >= expected.count, HTTPDate.lowercased(bytes.prefix(expected.count)) == literal.lowercased() else { return false }
            bytes.removeFirst(expected.count)
            return true
        }

        /// Exactly `count` digits, as a number.
        mutating func digits(_ count: Int) -> Int? {
            guard bytes.count >= count else { return nil }
            var value = 0
            for byte in bytes.prefix(count) {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            bytes.removeFirst(count)
            return value
        }

        /// A month's three letters, as 1…12.
        mutating func month() -> Int? {
            guard bytes.count >= 3, let index = HTTPDate.monthNames.firstIndex(of: HTTPDate.lowercased(bytes.prefix(3))) else { return nil }
            bytes.removeFirst(3)
            return index + 1
        }

        /// `HH:MM:SS` as seconds into the day (a leap second's 60 allowed).
        mutating func time() -> Int? {
            guard let hour = digits(2), take(":"), let minute = digits(2), take(":"), let second = digits(2),
                  hour < 24, minute < 60, second <= 60 else { return nil }
            return hour * 3600 + minute * 60 + second
        }
    }

    /// ASCII letters in lower case; any other byte as it is (so it matches no name).
    private static func lowercased(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 }, as: UTF8.self)
    }

    /// The year of `twoDigits` within 50 years of `reference` (RFC 9110: one that would be
    /// more than 50 years in the future is the most recent past year with those digits).
    static func fullYear(_ twoDigits: Int, reference: Double) -> Int {
        let day = reference.isFinite ? (reference / 86_400).rounded(.down) : 0
        let now = civil(days: Int(max(-1e9, min(1e9, day)))).year
        var year = now - now % 100 + twoDigits
        if year > now + 50 { year -= 100 } else if year <= now - 50 { year += 100 }
        return year
    }

    /// Seconds since 1970 of a date and time of day (UTC), nil for a day the month lacks.
    static func seconds(year: Int, month: Int, day: Int, time: Int) -> Double? {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let length = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        guard day >= 1, day <= length else { return nil }
        return Double(days(year: year, month: month, day: day)) * 86_400 + Double(time)
    }

    /// Days since 1970-01-01 of a date of the proleptic Gregorian calendar.
    static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day counted from 1970-01-01.
    static func civil(days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, dayOfYear - (153 * shifted + 2) / 5 + 1)
    }
}
