extension HttpRequest {
    /// Which waiting request of a ``RequestQueue`` starts first when a slot frees: higher
    /// priority first, then order of arrival. Without a queue a request starts at once, and
    /// its priority means nothing.
    public enum Priority: Int32, Sendable, Comparable, CaseIterable, CustomStringConvertible {
        /// Starts after every waiting request of higher priority.
        case low = 0
        /// The default.
        case normal = 1
        /// Starts before every waiting request of lower priority.
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
