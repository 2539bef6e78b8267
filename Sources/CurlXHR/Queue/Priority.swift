extension HttpRequest {
    /// Which waiting request of a ``RequestQueue`` starts first when a slot frees: higher
    /// priority first, then order of arrival. Without a queue a request starts at once, and
    /// its priority means nothing.
    public enum Priority: Int32, Sendable, Comparable, CaseIterable, CustomStringConvertible {
        case low = 0
        case normal = 1
        case high = 2

        public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }

        public var description: String {
            switch self {
            case .low: "low"
            case .normal: "normal"
            case .high: "high"
            }
        }
    }
}
